// The skstats._core extension module, built by CMake's python_add_library.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <vector>

#include "skstats/stats.h"

namespace {

bool to_doubles(PyObject* seq, std::vector<double>& out) {
  PyObject* fast = PySequence_Fast(seq, "expected a sequence of numbers");
  if (!fast) return false;
  out.resize(static_cast<std::size_t>(PySequence_Fast_GET_SIZE(fast)));
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fast, static_cast<Py_ssize_t>(i)));
    if (PyErr_Occurred()) {
      Py_DECREF(fast);
      return false;
    }
  }
  Py_DECREF(fast);
  return true;
}

PyObject* py_mean(PyObject*, PyObject* arg) {
  std::vector<double> v;
  if (!to_doubles(arg, v)) return nullptr;
  return PyFloat_FromDouble(skstats::mean(v.data(), v.size()));
}

PyObject* py_variance(PyObject*, PyObject* arg) {
  std::vector<double> v;
  if (!to_doubles(arg, v)) return nullptr;
  return PyFloat_FromDouble(skstats::variance(v.data(), v.size()));
}

PyObject* py_variant(PyObject*, PyObject*) { return PyUnicode_FromString(skstats::variant()); }

PyMethodDef methods[] = {{"mean", py_mean, METH_O, "The mean of a sequence of numbers."},
                         {"variance", py_variance, METH_O, "The population variance of a sequence of numbers."},
                         {"variant", py_variant, METH_NOARGS, "Which variance was compiled."},
                         {nullptr, nullptr, 0, nullptr}};
PyModuleDef module = {PyModuleDef_HEAD_INIT, "skstats._core", nullptr, -1, methods};

}  // namespace

PyMODINIT_FUNC PyInit__core(void) { return PyModule_Create(&module); }
