// nbtop: a nanobind module at the top of the wheel.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

namespace nb = nanobind;

NB_MODULE(nbtop, m) {
    m.def("greet", [](const std::string& name) { return "hello, " + name; });
    m.def("scale", [](double x, double factor) { return x * factor; }, nb::arg("x"), nb::arg("factor") = 2.0);
}
