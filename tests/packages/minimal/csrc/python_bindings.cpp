// The Python binding library: everything the `_C` module exposes lives here, so
// the stub that setuptools compiles stays one line long.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <vector>

#include "minimal/minimal.h"

namespace {

bool to_doubles(PyObject* seq, std::vector<double>& out) {
  PyObject* fast = PySequence_Fast(seq, "expected a sequence of numbers");
  if (!fast) return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  out.resize(static_cast<std::size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    out[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fast, i));
    if (PyErr_Occurred()) {
      Py_DECREF(fast);
      return false;
    }
  }
  Py_DECREF(fast);
  return true;
}

PyObject* py_sum(PyObject*, PyObject* arg) {
  std::vector<double> values;
  if (!to_doubles(arg, values)) return nullptr;
  return PyFloat_FromDouble(minimal::sum(values.data(), values.size()));
}

PyObject* py_dot(PyObject*, PyObject* args) {
  PyObject *a, *b;
  if (!PyArg_ParseTuple(args, "OO", &a, &b)) return nullptr;
  std::vector<double> x, y;
  if (!to_doubles(a, x) || !to_doubles(b, y)) return nullptr;
  if (x.size() != y.size()) {
    PyErr_SetString(PyExc_ValueError, "dot: sequences differ in length");
    return nullptr;
  }
  return PyFloat_FromDouble(minimal::dot(x.data(), y.data(), x.size()));
}

PyObject* py_flavour(PyObject*, PyObject*) { return PyUnicode_FromString(minimal::build_flavour()); }

PyMethodDef methods[] = {
    {"sum", py_sum, METH_O, "Sum of a sequence of numbers."},
    {"dot", py_dot, METH_VARARGS, "Dot product of two sequences."},
    {"build_flavour", py_flavour, METH_NOARGS, "Which sum kernel was compiled."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "minimal._C", "minimal's C++ core", -1, methods};

}  // namespace

extern "C" __attribute__((visibility("default"))) PyObject* minimal_python_init_module(void) {
  return PyModule_Create(&module);
}
