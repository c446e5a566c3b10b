// The `_C._TensorBase` type. Python's tensorlet.Tensor subclasses it; every
// tensor handed to Python is created as an instance of that subclass.
#include "autograd/Autograd.h"
#include "generated/Functions.h"
#include "python/PythonBindings.h"

namespace tensorlet::python {
namespace {

PyTypeObject* g_tensor_class = nullptr;  // set by tensorlet/_tensor.py

THPTensor* as_tensor(PyObject* self) { return reinterpret_cast<THPTensor*>(self); }
const Tensor& T(PyObject* self) { return as_tensor(self)->tensor; }

void tensor_dealloc(PyObject* self) {
  Tensor& t = as_tensor(self)->tensor;
  if (t.defined() && t.impl()->pyobj() == self) t.impl()->set_pyobj(nullptr);
  t.~Tensor();
  Py_TYPE(self)->tp_free(self);
}

PyObject* tensor_new(PyTypeObject*, PyObject*, PyObject*) {
  PyErr_SetString(PyExc_TypeError, "use tensorlet.tensor(), tensorlet.empty() or another factory to make tensors");
  return nullptr;
}

// ---- properties ---------------------------------------------------------------

PyObject* get_shape(PyObject* self, void*) {
  TL_PY_BEGIN
  const auto& s = T(self).sizes();
  PyObject* tup = PyTuple_New(static_cast<Py_ssize_t>(s.size()));
  for (size_t i = 0; i < s.size(); ++i) PyTuple_SET_ITEM(tup, i, PyLong_FromLongLong(s[i]));
  return tup;
  TL_PY_END
}

PyObject* get_dtype(PyObject* self, void*) {
  PyObject* d = dtype_object(T(self).dtype());
  Py_INCREF(d);
  return d;
}

PyObject* get_device(PyObject* self, void*) { return PyUnicode_FromString(T(self).device().str().c_str()); }

PyObject* get_requires_grad(PyObject* self, void*) { return PyBool_FromLong(T(self).requires_grad()); }

int set_requires_grad_attr(PyObject* self, PyObject* value, void*) {
  try {
    if (!value || !PyBool_Check(value)) throw TypeError("requires_grad must be a bool");
    set_requires_grad(T(self), value == Py_True);
    return 0;
  } catch (...) {
    set_python_error_from_current_exception();
    return -1;
  }
}

PyObject* get_grad(PyObject* self, void*) {
  TL_PY_BEGIN
  return wrap(grad(T(self)));
  TL_PY_END
}

int set_grad_attr(PyObject* self, PyObject* value, void*) {
  try {
    if (!value || value == Py_None) set_grad(T(self), Tensor());
    else if (is_tensor(value)) set_grad(T(self), unpack_tensor(value));
    else throw TypeError("assigned grad expected to be a Tensor or None");
    return 0;
  } catch (...) {
    set_python_error_from_current_exception();
    return -1;
  }
}

PyObject* get_grad_fn_name(PyObject* self, void*) {
  auto fn = grad_fn(T(self));
  if (!fn) Py_RETURN_NONE;
  return PyUnicode_FromString(fn->name().c_str());
}

PyObject* get_is_leaf(PyObject* self, void*) { return PyBool_FromLong(is_leaf(T(self))); }
PyObject* get_version(PyObject* self, void*) { return PyLong_FromUnsignedLong(T(self).impl()->version()); }
PyObject* get_ndim(PyObject* self, void*) { return PyLong_FromLongLong(T(self).dim()); }

PyGetSetDef g_properties[] = {
    {"shape", get_shape, nullptr, nullptr, nullptr},
    {"dtype", get_dtype, nullptr, nullptr, nullptr},
    {"_device_str", get_device, nullptr, nullptr, nullptr},
    {"requires_grad", get_requires_grad, set_requires_grad_attr, nullptr, nullptr},
    {"grad", get_grad, set_grad_attr, nullptr, nullptr},
    {"_grad_fn_name", get_grad_fn_name, nullptr, nullptr, nullptr},
    {"is_leaf", get_is_leaf, nullptr, nullptr, nullptr},
    {"_version", get_version, nullptr, nullptr, nullptr},
    {"ndim", get_ndim, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

// ---- hand-written methods ----------------------------------------------------------

PyObject* optional_dim_query(PyObject* self, PyObject* args, bool strides) {
  TL_PY_BEGIN
  PyObject* dim = Py_None;
  if (!PyArg_ParseTuple(args, "|O", &dim)) return nullptr;
  const Tensor& t = T(self);
  const auto& v = strides ? t.strides() : t.sizes();
  if (dim == Py_None) {
    PyObject* tup = PyTuple_New(static_cast<Py_ssize_t>(v.size()));
    for (size_t i = 0; i < v.size(); ++i) PyTuple_SET_ITEM(tup, i, PyLong_FromLongLong(v[i]));
    return tup;
  }
  int64_t d = PyLong_AsLongLong(dim);
  if (d == -1 && PyErr_Occurred()) return nullptr;
  return PyLong_FromLongLong(v[wrap_dim(d, t.dim())]);
  TL_PY_END
}
PyObject* m_size(PyObject* self, PyObject* args) { return optional_dim_query(self, args, false); }
PyObject* m_stride(PyObject* self, PyObject* args) { return optional_dim_query(self, args, true); }
PyObject* m_dim(PyObject* self, PyObject*) { return PyLong_FromLongLong(T(self).dim()); }
PyObject* m_numel(PyObject* self, PyObject*) { return PyLong_FromLongLong(T(self).numel()); }
PyObject* m_element_size(PyObject* self, PyObject*) { return PyLong_FromSize_t(element_size(T(self).dtype())); }
PyObject* m_is_contiguous(PyObject* self, PyObject*) { return PyBool_FromLong(T(self).is_contiguous()); }
PyObject* m_storage_offset(PyObject* self, PyObject*) { return PyLong_FromLongLong(T(self).storage_offset()); }
PyObject* m_data_ptr(PyObject* self, PyObject*) { return PyLong_FromVoidPtr(T(self).data_ptr()); }

PyObject* m_item(PyObject* self, PyObject*) {
  TL_PY_BEGIN
  Scalar s = T(self).item();
  if (s.is_floating_point()) return PyFloat_FromDouble(s.to_double());
  if (s.is_bool()) return PyBool_FromLong(s.to<bool>());
  return PyLong_FromLongLong(s.to_int());
  TL_PY_END
}

PyObject* m_requires_grad_(PyObject* self, PyObject* args, PyObject* kwargs) {
  TL_PY_BEGIN
  int flag = 1;
  static const char* kw[] = {"requires_grad", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|p", const_cast<char**>(kw), &flag)) return nullptr;
  set_requires_grad(T(self), flag != 0);
  Py_INCREF(self);
  return self;
  TL_PY_END
}

PyMethodDef g_base_methods[] = {
    {"size", m_size, METH_VARARGS, nullptr},
    {"stride", m_stride, METH_VARARGS, nullptr},
    {"dim", m_dim, METH_NOARGS, nullptr},
    {"numel", m_numel, METH_NOARGS, nullptr},
    {"element_size", m_element_size, METH_NOARGS, nullptr},
    {"is_contiguous", m_is_contiguous, METH_NOARGS, nullptr},
    {"storage_offset", m_storage_offset, METH_NOARGS, nullptr},
    {"data_ptr", m_data_ptr, METH_NOARGS, nullptr},
    {"item", m_item, METH_NOARGS, nullptr},
    {"requires_grad_", (PyCFunction)(void (*)())m_requires_grad_, METH_VARARGS | METH_KEYWORDS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

// ---- buffer protocol: zero-copy numpy.asarray(tensor) for CPU tensors ---------------

char format_char(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return '?';
    case ScalarType::Byte: return 'B';
    case ScalarType::Int: return 'i';
    case ScalarType::Long: return 'q';
    case ScalarType::Float: return 'f';
    case ScalarType::Double: return 'd';
    default: return 'B';
  }
}

int get_buffer(PyObject* self, Py_buffer* view, int) {
  const Tensor& t = T(self);
  if (!t.device().is_cpu()) {
    PyErr_Format(PyExc_TypeError, "can't convert %s device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
                 "to host memory first.", t.device().str().c_str());
    return -1;
  }
  static const char* formats[] = {"?", "B", "i", "q", "f", "d"};
  Py_ssize_t nd = static_cast<Py_ssize_t>(t.dim());
  auto* dims = static_cast<Py_ssize_t*>(PyMem_Malloc(sizeof(Py_ssize_t) * (2 * nd + 1)));
  size_t item = element_size(t.dtype());
  for (Py_ssize_t i = 0; i < nd; ++i) {
    dims[i] = t.sizes()[i];
    dims[nd + i] = t.strides()[i] * static_cast<Py_ssize_t>(item);
  }
  view->buf = t.data_ptr();
  view->obj = self;
  Py_INCREF(self);
  view->len = t.numel() * static_cast<Py_ssize_t>(item);
  view->readonly = 0;
  view->itemsize = static_cast<Py_ssize_t>(item);
  view->format = const_cast<char*>(formats[static_cast<int>(t.dtype())]);
  (void)format_char;
  view->ndim = static_cast<int>(nd);
  view->shape = dims;
  view->strides = dims + nd;
  view->suboffsets = nullptr;
  view->internal = dims;
  return 0;
}

void release_buffer(PyObject*, Py_buffer* view) { PyMem_Free(view->internal); }

PyBufferProcs g_buffer = {get_buffer, release_buffer};

// ---- number protocol: `a + b`, `a - b`, `a * b`, `a / b` --------------------------------
// Two tensors go straight to the operator, without the argument parser; on small
// CPU tensors the GIL stays held (releasing and taking it back costs more than the
// kernel). Anything else (a Python number on either side, a wrong type) calls the
// generated function, `_C.add(a, b)`..., exactly as the operators did in Python.
enum NumberOp { kAdd, kSub, kMul, kDiv, kNumNumberOps };
PyObject* g_number_functions[kNumNumberOps] = {};
constexpr int64_t kKeepGilNumel = int64_t{1} << 15;

template <NumberOp op>
Tensor run_number_op(const Tensor& a, const Tensor& b) {
  if constexpr (op == kAdd) return tensorlet::add(a, b);
  else if constexpr (op == kSub) return tensorlet::sub(a, b);
  else if constexpr (op == kMul) return tensorlet::mul(a, b);
  else return tensorlet::div(a, b);
}

template <NumberOp op>
PyObject* number_op(PyObject* a, PyObject* b) {
  if (is_tensor(a) && is_tensor(b)) {
    TL_PY_BEGIN
    const Tensor& x = T(a);
    const Tensor& y = T(b);
    Tensor result;
    if (x.numel() <= kKeepGilNumel && y.numel() <= kKeepGilNumel && x.device().is_cpu() && y.device().is_cpu()) {
      result = run_number_op<op>(x, y);
    } else {
      GilRelease no_gil;
      result = run_number_op<op>(x, y);
    }
    return wrap(std::move(result));
    TL_PY_END
  }
  PyObject* fn = g_number_functions[op];
  if (!fn) Py_RETURN_NOTIMPLEMENTED;
  return PyObject_CallFunctionObjArgs(fn, a, b, nullptr);
}

PyNumberMethods g_number_methods = [] {
  PyNumberMethods m{};
  m.nb_add = number_op<kAdd>;
  m.nb_subtract = number_op<kSub>;
  m.nb_multiply = number_op<kMul>;
  m.nb_true_divide = number_op<kDiv>;
  return m;
}();

PyObject* set_tensor_class(PyObject*, PyObject* cls) {
  if (!PyType_Check(cls) || !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls), &THPTensorType)) {
    PyErr_SetString(PyExc_TypeError, "_set_tensor_class expects a subclass of _TensorBase");
    return nullptr;
  }
  Py_INCREF(cls);
  g_tensor_class = reinterpret_cast<PyTypeObject*>(cls);
  Py_RETURN_NONE;
}

}  // namespace

PyTypeObject THPTensorType = {PyVarObject_HEAD_INIT(nullptr, 0)};

bool is_tensor(PyObject* obj) { return PyObject_TypeCheck(obj, &THPTensorType); }
const Tensor& unpack_tensor(PyObject* obj) { return as_tensor(obj)->tensor; }

PyObject* wrap(Tensor t) {
  if (!t.defined()) Py_RETURN_NONE;
  if (auto* existing = static_cast<PyObject*>(t.impl()->pyobj())) {
    Py_INCREF(existing);
    return existing;
  }
  PyTypeObject* cls = g_tensor_class ? g_tensor_class : &THPTensorType;
  PyObject* obj = cls->tp_alloc(cls, 0);
  if (!obj) throw python_error();
  TensorImpl* impl = t.impl();
  new (&as_tensor(obj)->tensor) Tensor(std::move(t));
  impl->set_pyobj(obj);
  return obj;
}

PyObject* wrap(const std::tuple<Tensor, Tensor>& t) {
  PyObject* a = wrap(std::get<0>(t));
  PyObject* b = wrap(std::get<1>(t));
  return PyTuple_Pack(2, a, b);
}

void init_tensor_type(PyObject* module) {
  static PyMethodDef set_class_def = {"_set_tensor_class", set_tensor_class, METH_O, nullptr};
  // Hand-written and generated methods share one table.
  static std::vector<PyMethodDef> methods;
  for (PyMethodDef* m = g_base_methods; m->ml_name; ++m) methods.push_back(*m);
  for (PyMethodDef* m = generated_methods(); m->ml_name; ++m) methods.push_back(*m);
  methods.push_back({nullptr, nullptr, 0, nullptr});
  THPTensorType.tp_name = "tensorlet._C._TensorBase";
  THPTensorType.tp_basicsize = sizeof(THPTensor);
  THPTensorType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  THPTensorType.tp_dealloc = tensor_dealloc;
  THPTensorType.tp_new = tensor_new;
  THPTensorType.tp_getset = g_properties;
  THPTensorType.tp_methods = methods.data();
  THPTensorType.tp_as_buffer = &g_buffer;
  THPTensorType.tp_as_number = &g_number_methods;
  if (PyType_Ready(&THPTensorType) < 0) throw python_error();
  Py_INCREF(&THPTensorType);
  PyModule_AddObject(module, "_TensorBase", reinterpret_cast<PyObject*>(&THPTensorType));
  PyModule_AddObject(module, "_set_tensor_class", PyCFunction_New(&set_class_def, nullptr));
}

void init_tensor_number_methods(PyObject* module) {
  const char* names[kNumNumberOps] = {"add", "sub", "mul", "div"};
  for (int i = 0; i < kNumNumberOps; ++i) {
    PyObject* fn = PyObject_GetAttrString(module, names[i]);
    if (!fn) throw python_error();
    Py_XSETREF(g_number_functions[i], fn);
  }
}

}  // namespace tensorlet::python
