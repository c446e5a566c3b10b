// libcuext_python: what `cuext._C` exposes, against Python's C API (no pybind11, no torch).
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <exception>
#include <vector>

#include "cuext/cuext.h"

namespace {

bool to_floats(PyObject* seq, std::vector<float>& out) {
  PyObject* fast = PySequence_Fast(seq, "expected a sequence of numbers");
  if (!fast) return false;
  out.resize(static_cast<std::size_t>(PySequence_Fast_GET_SIZE(fast)));
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<float>(PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fast, static_cast<Py_ssize_t>(i))));
    if (PyErr_Occurred()) {
      Py_DECREF(fast);
      return false;
    }
  }
  Py_DECREF(fast);
  return true;
}

PyObject* py_scale_add(PyObject*, PyObject* args) {
  PyObject *a, *b;
  double alpha;
  if (!PyArg_ParseTuple(args, "OOd:scale_add", &a, &b, &alpha)) return nullptr;
  std::vector<float> x, y;
  if (!to_floats(a, x) || !to_floats(b, y)) return nullptr;
  if (x.size() != y.size()) {
    PyErr_SetString(PyExc_ValueError, "scale_add: shapes differ");
    return nullptr;
  }
  std::vector<float> out(x.size());
  try {
    cuext::scale_add(x.data(), y.data(), static_cast<float>(alpha), out.data(), out.size());
  } catch (const std::exception& error) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
    return nullptr;
  }
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(out.size()));
  for (std::size_t i = 0; list && i < out.size(); ++i)
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), PyFloat_FromDouble(out[i]));
  return list;
}

PyObject* py_architectures(PyObject*, PyObject*) { return PyUnicode_FromString(cuext::architectures()); }

PyMethodDef methods[] = {
    {"scale_add", py_scale_add, METH_VARARGS, "scale_add(x, y, alpha): x + alpha * y, on the GPU."},
    {"architectures", py_architectures, METH_NOARGS, "The CUDA architectures libcuext was built for."},
    {nullptr, nullptr, 0, nullptr}};
PyModuleDef module = {PyModuleDef_HEAD_INIT, "cuext._C", nullptr, -1, methods};

}  // namespace

extern "C" __attribute__((visibility("default"))) PyObject* cuext_python_init_module(void) {
  return PyModule_Create(&module);
}
