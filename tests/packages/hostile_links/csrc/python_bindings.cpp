// minimal._C's methods, in the binding library libminimal_python (the stub only forwards).
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <vector>

#include "minimal/minimal.h"

namespace {

// Any iterable of numbers into doubles; false with a Python error set.
bool read_numbers(PyObject* iterable, std::vector<double>* out) {
  PyObject* it = PyObject_GetIter(iterable);
  if (it == nullptr) return false;
  for (PyObject* item; (item = PyIter_Next(it)) != nullptr;) {
    out->push_back(PyFloat_AsDouble(item));
    Py_DECREF(item);
    if (PyErr_Occurred()) break;
  }
  Py_DECREF(it);
  return !PyErr_Occurred();
}

PyObject* sum(PyObject*, PyObject* numbers) {
  std::vector<double> v;
  return read_numbers(numbers, &v) ? PyFloat_FromDouble(minimal::sum(v.data(), v.size())) : nullptr;
}

PyObject* dot(PyObject*, PyObject* args) {
  PyObject *left, *right;
  std::vector<double> a, b;
  if (!PyArg_ParseTuple(args, "OO", &left, &right) || !read_numbers(left, &a) || !read_numbers(right, &b))
    return nullptr;
  if (a.size() != b.size()) return PyErr_Format(PyExc_ValueError, "dot: %zu and %zu numbers", a.size(), b.size());
  return PyFloat_FromDouble(minimal::dot(a.data(), b.data(), a.size()));
}

PyObject* flavour(PyObject*, PyObject*) { return PyUnicode_FromString(minimal::build_flavour()); }

PyMethodDef kMethods[] = {{"sum", sum, METH_O, nullptr},
                          {"dot", dot, METH_VARARGS, nullptr},
                          {"build_flavour", flavour, METH_NOARGS, nullptr},
                          {nullptr, nullptr, 0, nullptr}};
PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "minimal._C", nullptr, -1, kMethods};

}  // namespace

extern "C" __attribute__((visibility("default"))) PyObject* minimal_python_init_module(void) {
  return PyModule_Create(&kModule);
}
