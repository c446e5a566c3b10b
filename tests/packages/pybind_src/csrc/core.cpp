// pybsrc._core: a pybind11 module; the version string comes from CMake.
#include <pybind11/pybind11.h>

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
    m.def("add", [](long a, long b) { return a + b; }, py::arg("a"), py::arg("b"));
    m.attr("built_with") = "pybind11 " PYBSRC_VERSION;
}
