// The Python binding library: everything the `_C` module exposes lives here, so
// the stub that setuptools compiles stays one line long.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "cuda_minimal/cuda_minimal.h"

namespace {

bool to_floats(PyObject* seq, std::vector<float>& out) {
  PyObject* fast = PySequence_Fast(seq, "expected a sequence of numbers");
  if (!fast) return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  out.resize(static_cast<std::size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    out[i] = static_cast<float>(PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fast, i)));
    if (PyErr_Occurred()) {
      Py_DECREF(fast);
      return false;
    }
  }
  Py_DECREF(fast);
  return true;
}

// saxpy(a, x, y, device="auto") -> (list of floats, "cuda" or "cpu")
PyObject* py_saxpy(PyObject*, PyObject* args) {
  double a;
  PyObject *xs, *ys;
  const char* device = "auto";
  if (!PyArg_ParseTuple(args, "dOO|s", &a, &xs, &ys, &device)) return nullptr;
  cuda_minimal::Device which;
  if (std::strcmp(device, "auto") == 0) {
    which = cuda_minimal::Device::Auto;
  } else if (std::strcmp(device, "cpu") == 0) {
    which = cuda_minimal::Device::Cpu;
  } else if (std::strcmp(device, "cuda") == 0) {
    which = cuda_minimal::Device::Cuda;
  } else {
    PyErr_Format(PyExc_ValueError, "saxpy: device must be 'auto', 'cpu' or 'cuda', not '%s'", device);
    return nullptr;
  }
  std::vector<float> x, y;
  if (!to_floats(xs, x) || !to_floats(ys, y)) return nullptr;
  if (x.size() != y.size()) {
    PyErr_SetString(PyExc_ValueError, "saxpy: x and y differ in length");
    return nullptr;
  }
  const char* backend = nullptr;
  std::string error;
  Py_BEGIN_ALLOW_THREADS  // a GPU round trip needs no GIL
  try {
    backend = cuda_minimal::saxpy(static_cast<float>(a), x.data(), y.data(), x.size(), which);
  } catch (const std::exception& e) {
    error = e.what();  // CudaError: the failed call and CUDA's message
  }
  Py_END_ALLOW_THREADS
  if (!backend) {
    PyErr_SetString(PyExc_RuntimeError, error.c_str());
    return nullptr;
  }
  PyObject* result = PyList_New(static_cast<Py_ssize_t>(y.size()));
  if (!result) return nullptr;
  for (std::size_t i = 0; i < y.size(); ++i)
    PyList_SET_ITEM(result, static_cast<Py_ssize_t>(i), PyFloat_FromDouble(y[i]));
  return Py_BuildValue("(Ns)", result, backend);
}

PyObject* py_cuda_available(PyObject*, PyObject*) { return PyBool_FromLong(cuda_minimal::cuda_available()); }
PyObject* py_device_count(PyObject*, PyObject*) { return PyLong_FromLong(cuda_minimal::cuda_device_count()); }
PyObject* py_cuda_status(PyObject*, PyObject*) { return PyUnicode_FromString(cuda_minimal::cuda_status().c_str()); }
PyObject* py_built_with_cuda(PyObject*, PyObject*) { return PyBool_FromLong(cuda_minimal::built_with_cuda()); }
PyObject* py_architectures(PyObject*, PyObject*) {
  return PyUnicode_FromString(cuda_minimal::compiled_architectures());
}

PyMethodDef methods[] = {
    {"saxpy", py_saxpy, METH_VARARGS, "saxpy(a, x, y, device='auto') -> (a*x+y as a list, backend used)."},
    {"cuda_available", py_cuda_available, METH_NOARGS, "Whether a CUDA device can be used."},
    {"cuda_device_count", py_device_count, METH_NOARGS, "Number of usable CUDA devices (0 without a driver)."},
    {"cuda_status", py_cuda_status, METH_NOARGS, "'ok', or why no CUDA device can be used."},
    {"built_with_cuda", py_built_with_cuda, METH_NOARGS, "Whether the CUDA kernel was compiled in."},
    {"compiled_architectures", py_architectures, METH_NOARGS, "CMAKE_CUDA_ARCHITECTURES at build time."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "cuda_minimal._C", "cuda_minimal's C++/CUDA core", -1, methods};

}  // namespace

extern "C" __attribute__((visibility("default"))) PyObject* cuda_minimal_python_init_module(void) {
  return PyModule_Create(&module);
}
