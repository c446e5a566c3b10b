// tensorlet.functional._functional_C: the loop behind vmap(), in C so the per-
// example calls avoid Python-level argument shuffling. It only uses the public
// Python API of tensorlet (select / empty / copy_), not the C++ library.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

namespace {

// _vmap_call(func, args: tuple, in_dims: tuple[int | None], batch: int) -> Tensor
PyObject* vmap_call(PyObject*, PyObject* a) {
  PyObject *func, *args, *in_dims;
  Py_ssize_t batch;
  if (!PyArg_ParseTuple(a, "OO!O!n", &func, &PyTuple_Type, &args, &PyTuple_Type, &in_dims, &batch)) return nullptr;
  Py_ssize_t nargs = PyTuple_GET_SIZE(args);
  if (PyTuple_GET_SIZE(in_dims) != nargs) {
    PyErr_SetString(PyExc_ValueError, "vmap: in_dims must have one entry per argument");
    return nullptr;
  }
  PyObject* result = nullptr;  // [batch, *example_shape]
  for (Py_ssize_t i = 0; i < batch; ++i) {
    PyObject* call_args = PyTuple_New(nargs);
    for (Py_ssize_t k = 0; k < nargs; ++k) {
      PyObject* arg = PyTuple_GET_ITEM(args, k);
      PyObject* dim = PyTuple_GET_ITEM(in_dims, k);
      PyObject* item = dim == Py_None ? (Py_INCREF(arg), arg) : PyObject_CallMethod(arg, "select", "On", dim, i);
      if (!item) {
        Py_DECREF(call_args);
        Py_XDECREF(result);
        return nullptr;
      }
      PyTuple_SET_ITEM(call_args, k, item);
    }
    PyObject* out = PyObject_Call(func, call_args, nullptr);
    Py_DECREF(call_args);
    if (!out) {
      Py_XDECREF(result);
      return nullptr;
    }
    if (!result) {
      // Allocate the stacked output from the first example's shape and dtype.
      PyObject* shape = PyObject_GetAttrString(out, "shape");
      PyObject* dtype = PyObject_GetAttrString(out, "dtype");
      PyObject* module = PyImport_ImportModule("tensorlet");
      PyObject* head = Py_BuildValue("(n)", batch);
      PyObject* full_shape = shape && head ? PySequence_Concat(head, shape) : nullptr;
      PyObject* empty = module ? PyObject_GetAttrString(module, "empty") : nullptr;
      PyObject* kwargs = dtype ? Py_BuildValue("{sO}", "dtype", dtype) : nullptr;
      PyObject* pos = full_shape ? PyTuple_Pack(1, full_shape) : nullptr;
      result = empty && pos && kwargs ? PyObject_Call(empty, pos, kwargs) : nullptr;
      Py_XDECREF(shape);
      Py_XDECREF(dtype);
      Py_XDECREF(module);
      Py_XDECREF(head);
      Py_XDECREF(full_shape);
      Py_XDECREF(empty);
      Py_XDECREF(kwargs);
      Py_XDECREF(pos);
      if (!result) {
        Py_DECREF(out);
        return nullptr;
      }
    }
    PyObject* slot = PyObject_CallMethod(result, "select", "in", 0, i);
    PyObject* copied = slot ? PyObject_CallMethod(slot, "copy_", "O", out) : nullptr;
    Py_XDECREF(slot);
    Py_DECREF(out);
    if (!copied) {
      Py_DECREF(result);
      return nullptr;
    }
    Py_DECREF(copied);
  }
  if (!result) Py_RETURN_NONE;
  return result;
}

PyMethodDef g_methods[] = {
    {"_vmap_call", vmap_call, METH_VARARGS, "Runs func on each batch element and stacks the results."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef g_module = {PyModuleDef_HEAD_INIT, "tensorlet.functional._functional_C", nullptr, -1, g_methods};

}  // namespace

PyMODINIT_FUNC PyInit__functional_C(void) { return PyModule_Create(&g_module); }
