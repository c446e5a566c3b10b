// libfastvec_python: what `fastvec._C` exposes (the module itself is csrc/stub.c).
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <vector>

#include "fastvec/fastvec.h"

namespace {

PyObject* py_norm(PyObject*, PyObject* arg) {
  PyObject* fast = PySequence_Fast(arg, "norm: expected a sequence of numbers");
  if (!fast) return nullptr;
  std::vector<double> values(static_cast<std::size_t>(PySequence_Fast_GET_SIZE(fast)));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fast, static_cast<Py_ssize_t>(i)));
    if (PyErr_Occurred()) {
      Py_DECREF(fast);
      return nullptr;
    }
  }
  Py_DECREF(fast);
  return PyFloat_FromDouble(fastvec::norm(values.data(), values.size()));
}

PyMethodDef methods[] = {{"norm", py_norm, METH_O, "The Euclidean norm of a sequence of numbers."},
                         {nullptr, nullptr, 0, nullptr}};
PyModuleDef module = {PyModuleDef_HEAD_INIT, "fastvec._C", nullptr, -1, methods};

}  // namespace

extern "C" __attribute__((visibility("default"))) PyObject* fastvec_python_init_module(void) {
  return PyModule_Create(&module);
}
