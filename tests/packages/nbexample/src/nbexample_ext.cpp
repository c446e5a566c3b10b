#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>

namespace nb = nanobind;

NB_MODULE(nbexample_ext, m) {
    m.doc() = "A nanobind module built like nanobind's example";
    m.def("add", [](int a, int b) { return a + b; }, nb::arg("a"), nb::arg("b"), "Add two integers.");
    m.def("greet", [](const std::string &name) { return "hello, " + name; }, nb::arg("name"));
}
