"""buildkit test package: see CMakeLists.txt."""
