#pragma once
// Installed only when BUILD_EXTRAS=ON; exercises cache-driven package_data.
namespace minimal::extras { inline int answer() { return 42; } }
