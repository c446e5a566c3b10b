// The module Python imports: built for the stable ABI (py_limited_api=True), so it uses
// only Python's limited API. Importing it loads the library and runs the registrations
// of ops.cpp.
#include <Python.h>

extern "C" PyObject* PyInit__C(void) {
  static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_C", nullptr, -1, nullptr};
  return PyModule_Create(&module);
}
