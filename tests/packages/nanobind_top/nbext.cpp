// nbpkg._ext: a nanobind module inside the src/ package.
#include <nanobind/nanobind.h>

NB_MODULE(_ext, m) { m.def("twice", [](int x) { return 2 * x; }); }
