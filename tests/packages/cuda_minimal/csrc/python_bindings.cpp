// cuda_minimal._C's methods, in the binding library libcuda_minimal_python.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "cuda_minimal/cuda_minimal.h"

namespace {

bool read_floats(PyObject* iterable, std::vector<float>* out) {
  PyObject* it = PyObject_GetIter(iterable);
  if (it == nullptr) return false;
  for (PyObject* item; (item = PyIter_Next(it)) != nullptr;) {
    out->push_back(static_cast<float>(PyFloat_AsDouble(item)));
    Py_DECREF(item);
    if (PyErr_Occurred()) break;
  }
  Py_DECREF(it);
  return !PyErr_Occurred();
}

bool parse_device(std::string_view name, cuda_minimal::Device* device) {
  using cuda_minimal::Device;
  if (name == "auto" || name == "cpu" || name == "cuda") {
    *device = name == "auto" ? Device::Auto : name == "cpu" ? Device::Cpu : Device::Cuda;
    return true;
  }
  PyErr_Format(PyExc_ValueError, "saxpy: device must be 'auto', 'cpu' or 'cuda', not '%s'", name.data());
  return false;
}

// saxpy(a, x, y, device="auto") -> (a*x+y as a list, "cuda" or "cpu")
PyObject* saxpy(PyObject*, PyObject* args) {
  double a;
  PyObject *xs, *ys;
  const char* name = "auto";
  cuda_minimal::Device device;
  std::vector<float> x, y;
  if (!PyArg_ParseTuple(args, "dOO|s", &a, &xs, &ys, &name) || !parse_device(name, &device) ||
      !read_floats(xs, &x) || !read_floats(ys, &y))
    return nullptr;
  if (x.size() != y.size()) return PyErr_Format(PyExc_ValueError, "saxpy: %zu x and %zu y", x.size(), y.size());
  const char* backend = nullptr;
  std::string error;
  Py_BEGIN_ALLOW_THREADS
  try {
    backend = cuda_minimal::saxpy(static_cast<float>(a), x.data(), y.data(), x.size(), device);
  } catch (const std::exception& e) {
    error = e.what();
  }
  Py_END_ALLOW_THREADS
  if (backend == nullptr) return PyErr_Format(PyExc_RuntimeError, "%s", error.c_str());
  PyObject* values = PyList_New(0);
  for (float v : y) {
    PyObject* number = PyFloat_FromDouble(v);
    PyList_Append(values, number);
    Py_DECREF(number);
  }
  return Py_BuildValue("(Ns)", values, backend);
}

PyObject* cuda_status(PyObject*, PyObject*) {
  std::string why;
  return PyUnicode_FromString(cuda_minimal::cuda_device_count(&why) > 0 ? "ok" : why.c_str());
}
PyObject* cuda_available(PyObject*, PyObject*) { return PyBool_FromLong(cuda_minimal::cuda_device_count() > 0); }
PyObject* built_with_cuda(PyObject*, PyObject*) { return PyBool_FromLong(cuda_minimal::built_with_cuda()); }
PyObject* architectures(PyObject*, PyObject*) { return PyUnicode_FromString(cuda_minimal::compiled_architectures()); }

PyMethodDef kMethods[] = {{"saxpy", saxpy, METH_VARARGS, nullptr},
                          {"cuda_status", cuda_status, METH_NOARGS, nullptr},
                          {"cuda_available", cuda_available, METH_NOARGS, nullptr},
                          {"built_with_cuda", built_with_cuda, METH_NOARGS, nullptr},
                          {"compiled_architectures", architectures, METH_NOARGS, nullptr},
                          {nullptr, nullptr, 0, nullptr}};
PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "cuda_minimal._C", nullptr, -1, kMethods};

}  // namespace

extern "C" __attribute__((visibility("default"))) PyObject* cuda_minimal_python_init_module(void) {
  return PyModule_Create(&kModule);
}
