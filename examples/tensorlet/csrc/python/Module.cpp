// The `tensorlet._C` module: created by tensorlet_python_init_module(), which the
// tiny PyInit__C stub (csrc/stub.c) calls.
#include <unordered_map>

#include "autograd/Autograd.h"
#include "dispatch/Dispatcher.h"
#include "dispatch/Tracing.h"
#include "ops/Random.h"
#include "python/PythonBindings.h"

namespace tensorlet::python {

void set_python_error_from_current_exception() {
  try {
    throw;
  } catch (const python_error&) {
    // already set
  } catch (const IndexError& e) {
    PyErr_SetString(PyExc_IndexError, e.what());
  } catch (const TypeError& e) {
    PyErr_SetString(PyExc_TypeError, e.what());
  } catch (const ValueError& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const NotImplementedError& e) {
    PyErr_SetString(PyExc_NotImplementedError, e.what());
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
}

// ---- dtypes ---------------------------------------------------------------------------
PyTypeObject THPDtypeType = {PyVarObject_HEAD_INIT(nullptr, 0)};
namespace {
PyObject* g_dtypes[kNumScalarTypes] = {};

PyObject* dtype_repr(PyObject* self) {
  return PyUnicode_FromFormat("tensorlet.%s", scalar_type_name(reinterpret_cast<THPDtype*>(self)->scalar_type));
}
PyObject* dtype_is_floating(PyObject* self, void*) {
  return PyBool_FromLong(is_floating_type(reinterpret_cast<THPDtype*>(self)->scalar_type));
}
PyObject* dtype_itemsize(PyObject* self, void*) {
  return PyLong_FromSize_t(element_size(reinterpret_cast<THPDtype*>(self)->scalar_type));
}
PyObject* dtype_name(PyObject* self, void*) {
  return PyUnicode_FromString(scalar_type_name(reinterpret_cast<THPDtype*>(self)->scalar_type));
}
PyObject* dtype_reduce(PyObject* self, PyObject*) { return dtype_name(self, nullptr); }
PyGetSetDef g_dtype_props[] = {
    {"is_floating_point", dtype_is_floating, nullptr, nullptr, nullptr},
    {"itemsize", dtype_itemsize, nullptr, nullptr, nullptr},
    {"_name", dtype_name, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};
PyMethodDef g_dtype_methods[] = {{"__reduce__", dtype_reduce, METH_NOARGS, nullptr}, {nullptr, nullptr, 0, nullptr}};
}  // namespace

PyObject* dtype_object(ScalarType t) { return g_dtypes[static_cast<int>(t)]; }

void init_dtypes(PyObject* module) {
  THPDtypeType.tp_name = "tensorlet.dtype";
  THPDtypeType.tp_basicsize = sizeof(THPDtype);
  THPDtypeType.tp_flags = Py_TPFLAGS_DEFAULT;
  THPDtypeType.tp_repr = dtype_repr;
  THPDtypeType.tp_getset = g_dtype_props;
  THPDtypeType.tp_methods = g_dtype_methods;
  if (PyType_Ready(&THPDtypeType) < 0) throw python_error();
  Py_INCREF(&THPDtypeType);
  PyModule_AddObject(module, "dtype", reinterpret_cast<PyObject*>(&THPDtypeType));
  for (int i = 0; i < kNumScalarTypes; ++i) {
    auto* d = PyObject_New(THPDtype, &THPDtypeType);
    d->scalar_type = static_cast<ScalarType>(i);
    g_dtypes[i] = reinterpret_cast<PyObject*>(d);
    Py_INCREF(d);
    PyModule_AddObject(module, scalar_type_name(d->scalar_type), reinterpret_cast<PyObject*>(d));
  }
}

namespace {

// ---- from_numpy: share memory through the buffer protocol ------------------------------
void release_py_buffer(void* ctx) {
  auto* view = static_cast<Py_buffer*>(ctx);
  PyGILState_STATE g = PyGILState_Ensure();
  PyBuffer_Release(view);
  PyGILState_Release(g);
  delete view;
}

ScalarType dtype_from_format(const char* fmt, Py_ssize_t itemsize) {
  char c = fmt[0];
  if (c == '<' || c == '=' || c == '@' || c == '|') c = fmt[1];
  switch (c) {
    case '?': return ScalarType::Bool;
    case 'B': return ScalarType::Byte;
    case 'i': return itemsize == 4 ? ScalarType::Int : ScalarType::Undefined;
    case 'l': case 'q': return itemsize == 8 ? ScalarType::Long : itemsize == 4 ? ScalarType::Int : ScalarType::Undefined;
    case 'f': return ScalarType::Float;
    case 'd': return ScalarType::Double;
  }
  return ScalarType::Undefined;
}

PyObject* from_numpy(PyObject*, PyObject* arr) {
  TL_PY_BEGIN
  auto* view = new Py_buffer();
  if (PyObject_GetBuffer(arr, view, PyBUF_RECORDS) != 0) {
    PyErr_Clear();
    if (PyObject_GetBuffer(arr, view, PyBUF_RECORDS_RO) != 0) {
      delete view;
      return nullptr;
    }
  }
  ScalarType dt = dtype_from_format(view->format ? view->format : "B", view->itemsize);
  if (dt == ScalarType::Undefined) {
    std::string fmt = view->format ? view->format : "?";
    PyBuffer_Release(view);
    delete view;
    throw TypeError("can't convert np.ndarray of format '" + fmt + "'. The only supported types are: float64, "
                    "float32, int64, int32, uint8, and bool.");
  }
  std::vector<int64_t> sizes(view->ndim), strides(view->ndim);
  for (int i = 0; i < view->ndim; ++i) {
    sizes[i] = view->shape[i];
    if (view->strides[i] % view->itemsize != 0) {
      PyBuffer_Release(view);
      delete view;
      throw ValueError("given numpy array strides not a multiple of the element byte size");
    }
    strides[i] = view->strides[i] / view->itemsize;
  }
  // The storage must cover the lowest and highest address the array touches;
  // negative strides (a[::-1]) would need an offset before the buffer start.
  for (int64_t s : strides)
    if (s < 0) {
      PyBuffer_Release(view);
      delete view;
      throw ValueError("At least one stride in the given numpy array is negative; copy the array first (np.ascontiguousarray).");
    }
  void* data = view->buf;
  size_t nbytes = static_cast<size_t>(view->len);
  auto storage = make_intrusive<StorageImpl>(DataPtr(data, view, &release_py_buffer, Device(DeviceType::CPU)), nbytes);
  auto impl = make_intrusive<TensorImpl>(std::move(storage), dt, std::move(sizes), std::move(strides), 0);
  return wrap(Tensor(std::move(impl)));
  TL_PY_END
}

std::vector<Tensor> tensor_sequence(PyObject* seq) {
  std::vector<Tensor> out;
  PyObject* fast = PySequence_Fast(seq, "expected a sequence of tensors");
  if (!fast) throw python_error();
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); ++i) {
    PyObject* o = PySequence_Fast_GET_ITEM(fast, i);
    out.push_back(o == Py_None ? Tensor() : unpack_tensor(o));
  }
  Py_DECREF(fast);
  return out;
}

PyObject* py_backward(PyObject*, PyObject* args) {
  TL_PY_BEGIN
  PyObject *tensors, *grads;
  int retain_graph = 0;
  if (!PyArg_ParseTuple(args, "OO|p", &tensors, &grads, &retain_graph)) return nullptr;
  auto outs = tensor_sequence(tensors);
  auto gs = tensor_sequence(grads);
  {
    GilRelease no_gil;
    run_backward(outs, gs, retain_graph != 0);
  }
  Py_RETURN_NONE;
  TL_PY_END
}

PyObject* set_grad_enabled(PyObject*, PyObject* arg) {
  GradMode::set_enabled(PyObject_IsTrue(arg));
  Py_RETURN_NONE;
}
PyObject* is_grad_enabled(PyObject*, PyObject*) { return PyBool_FromLong(GradMode::is_enabled()); }

PyObject* py_manual_seed(PyObject*, PyObject* arg) {
  unsigned long long seed = PyLong_AsUnsignedLongLongMask(arg);
  if (PyErr_Occurred()) return nullptr;
  manual_seed(seed);
  Py_RETURN_NONE;
}

PyObject* py_set_tracing(PyObject*, PyObject* arg) {
  set_tracing_enabled(PyObject_IsTrue(arg));
  Py_RETURN_NONE;
}

PyObject* py_tracing_log(PyObject*, PyObject*) {
  auto log = take_tracing_log();
  PyObject* l = PyList_New(static_cast<Py_ssize_t>(log.size()));
  for (size_t i = 0; i < log.size(); ++i) PyList_SET_ITEM(l, i, PyUnicode_FromString(log[i].c_str()));
  return l;
}

// _call_op("ns::name.overload", *args, **kwargs): the boxed path, for ops that
// have no generated binding (ops registered by extensions, for instance).
PyObject* py_call_op(PyObject*, PyObject* args, PyObject* kwargs) {
  TL_PY_BEGIN
  if (PyTuple_GET_SIZE(args) < 1 || !PyUnicode_Check(PyTuple_GET_ITEM(args, 0)))
    throw TypeError("_call_op(name, *args, **kwargs): name must be a string");
  std::string name = qualify_op_name(PyUnicode_AsUTF8(PyTuple_GET_ITEM(args, 0)), "tensorlet");
  OperatorHandle op = Dispatcher::singleton().find_or_throw(name);
  static std::unordered_map<std::string, std::unique_ptr<PythonArgParser>> parsers;
  auto& parser = parsers[name];
  if (!parser || !op.has_schema()) parser = std::make_unique<PythonArgParser>(name, op.schema());
  std::unique_ptr<PyObject, void (*)(PyObject*)> rest(PyTuple_GetSlice(args, 1, PyTuple_GET_SIZE(args)),
                                                      [](PyObject* o) { Py_XDECREF(o); });
  ParsedArgs r;
  parser->parse(nullptr, rest.get(), kwargs, r);
  Stack stack;
  for (size_t i = 0; i < r.values.size(); ++i) stack.push_back(r.ivalue(i));
  {
    GilRelease no_gil;
    Dispatcher::singleton().call(op, &stack);
  }
  if (stack.empty()) Py_RETURN_NONE;
  if (stack.size() == 1) return from_ivalue(stack[0]);
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(stack.size()));
  for (size_t i = 0; i < stack.size(); ++i) PyTuple_SET_ITEM(t, i, from_ivalue(stack[i]));
  return t;
  TL_PY_END
}

PyObject* py_op_names(PyObject*, PyObject*) {
  auto names = Dispatcher::singleton().operator_names();
  PyObject* l = PyList_New(static_cast<Py_ssize_t>(names.size()));
  for (size_t i = 0; i < names.size(); ++i) PyList_SET_ITEM(l, i, PyUnicode_FromString(names[i].c_str()));
  return l;
}

// {"registered": {key: kernel}, "table": {runtime key: kernel}} for one op.
PyObject* py_dispatch_table(PyObject*, PyObject* arg) {
  TL_PY_BEGIN
  std::string name = qualify_op_name(PyUnicode_AsUTF8(arg), "tensorlet");
  OperatorHandle op = Dispatcher::singleton().find_or_throw(name);
  PyObject* registered = PyDict_New();
  PyObject* table = PyDict_New();
  for (int k = 1; k < kNumDispatchKeys; ++k) {
    auto key = static_cast<DispatchKey>(k);
    const auto& kernel = op.entry()->kernels[k];
    if (kernel) {
      PyObject* v = PyUnicode_FromString(kernel->name.c_str());
      PyDict_SetItemString(registered, dispatch_key_name(key), v);
      Py_DECREF(v);
    }
    if (k < kNumRuntimeKeys) {
      PyObject* v = PyUnicode_FromString(op.kernel_for(key).name.c_str());
      PyDict_SetItemString(table, dispatch_key_name(key), v);
      Py_DECREF(v);
    }
  }
  PyObject* out = Py_BuildValue("{sNsN}", "registered", registered, "table", table);
  return out;
  TL_PY_END
}

PyObject* py_schema(PyObject*, PyObject* arg) {
  TL_PY_BEGIN
  std::string name = qualify_op_name(PyUnicode_AsUTF8(arg), "tensorlet");
  return PyUnicode_FromString(Dispatcher::singleton().find_or_throw(name).schema().str().c_str());
  TL_PY_END
}

PyObject* py_has_allocator(PyObject*, PyObject* arg) {
  TL_PY_BEGIN
  return PyBool_FromLong(has_allocator(Device(PyUnicode_AsUTF8(arg)).type));
  TL_PY_END
}

PyMethodDef g_module_methods[] = {
    {"_from_numpy", from_numpy, METH_O, "Tensor sharing memory with a buffer (numpy array)."},
    {"_backward", py_backward, METH_VARARGS, nullptr},
    {"_set_grad_enabled", set_grad_enabled, METH_O, nullptr},
    {"_is_grad_enabled", is_grad_enabled, METH_NOARGS, nullptr},
    {"_manual_seed", py_manual_seed, METH_O, nullptr},
    {"_set_tracing", py_set_tracing, METH_O, "Add/remove the Tracing key for this thread."},
    {"_tracing_log", py_tracing_log, METH_NOARGS, "Calls logged by the Tracing key (cleared on read)."},
    {"_call_op", (PyCFunction)(void (*)())py_call_op, METH_VARARGS | METH_KEYWORDS, nullptr},
    {"_op_names", py_op_names, METH_NOARGS, nullptr},
    {"_dispatch_table", py_dispatch_table, METH_O, nullptr},
    {"_schema", py_schema, METH_O, nullptr},
    {"_has_allocator", py_has_allocator, METH_O, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef g_module = {PyModuleDef_HEAD_INIT, "tensorlet._C", "tensorlet's native core", -1, g_module_methods};

}  // namespace
}  // namespace tensorlet::python

extern "C" __attribute__((visibility("default"))) PyObject* tensorlet_python_init_module(void) {
  using namespace tensorlet::python;
  PyObject* m = PyModule_Create(&g_module);
  if (!m) return nullptr;
  try {
    init_dtypes(m);
    init_tensor_type(m);
    PyModule_AddFunctions(m, generated_functions());
    init_tensor_number_methods(m);
    PyObject* names = PyList_New(0);
    for (PyMethodDef* f = generated_functions(); f->ml_name; ++f) {
      PyObject* s = PyUnicode_FromString(f->ml_name);
      PyList_Append(names, s);
      Py_DECREF(s);
    }
    PyModule_AddObject(m, "_generated_function_names", names);
  } catch (...) {
    set_python_error_from_current_exception();
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
