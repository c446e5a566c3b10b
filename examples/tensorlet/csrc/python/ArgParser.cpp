// Binds Python (args, kwargs) to a schema: positional then keyword arguments,
// defaults from the schema, Python numbers accepted where a Tensor is expected in the
// ops torch accepts them for (as 0-dim "wrapped number" tensors), and `f(2, 3)`
// accepted for `int[] size`.
#include <sstream>
#include <unordered_set>

#include "python/PythonBindings.h"

namespace tensorlet::python {
namespace {

bool is_int(PyObject* o) { return !PyBool_Check(o) && (PyLong_Check(o) || (PyIndex_Check(o) && !is_tensor(o))); }
bool is_number(PyObject* o) { return PyLong_Check(o) || PyFloat_Check(o) || PyBool_Check(o); }
bool is_int_sequence(PyObject* o) {
  if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!is_int(PySequence_Fast_GET_ITEM(o, i))) return false;
  return true;
}

// torch's binding takes a Python number for a Tensor argument only in the arithmetic
// ops, the comparisons and where (which have Scalar overloads there) and copy_:
// `torch.maximum(x, 2)` or `torch.mm(x, 2)` is a TypeError, so it is one here too.
bool numbers_as_tensors(const std::string& op) {
  static const std::unordered_set<std::string> ops = {"add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_",
                                                      "eq",  "lt",   "gt",  "where", "copy_"};
  return ops.count(op) > 0;
}

bool matches(const SchemaArgument& a, PyObject* o, bool numbers) {
  if (o == Py_None) return a.type.is_optional || (a.default_text && *a.default_text == "None");
  if (a.type.is_list) return is_int_sequence(o) || is_int(o);
  switch (a.type.base) {
    case BaseType::Tensor: return is_tensor(o) || (numbers && is_number(o));
    case BaseType::Scalar: return is_number(o) || (is_tensor(o) && unpack_tensor(o).numel() == 1);
    case BaseType::Float: return PyFloat_Check(o) || is_int(o);
    case BaseType::Int: return is_int(o);
    case BaseType::Bool: return PyBool_Check(o);
    case BaseType::ScalarType: return PyObject_TypeCheck(o, &THPDtypeType);
    case BaseType::Device: return PyUnicode_Check(o) || PyObject_HasAttrString(o, "type");
  }
  return false;
}

Scalar to_scalar(PyObject* o) {
  if (PyBool_Check(o)) return Scalar(o == Py_True);
  if (PyFloat_Check(o)) return Scalar(PyFloat_AS_DOUBLE(o));
  if (is_tensor(o)) return unpack_tensor(o).item();
  int64_t v = PyLong_AsLongLong(o);
  if (v == -1 && PyErr_Occurred()) throw python_error();
  return Scalar(v);
}

int64_t to_int64(PyObject* o) {
  int64_t v = PyLong_AsLongLong(o);
  if (v == -1 && PyErr_Occurred()) throw python_error();
  return v;
}

std::string type_name(PyObject* o) {
  if (is_tensor(o)) return "Tensor";
  return Py_TYPE(o)->tp_name;
}

}  // namespace

IValue to_ivalue(const SchemaArgument& a, PyObject* o) {
  if (o == nullptr) return a.default_value;
  if (o == Py_None) return IValue();
  if (a.type.is_list) {
    std::vector<int64_t> values;
    if (is_int(o)) {
      values.push_back(to_int64(o));
    } else {
      Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
      for (Py_ssize_t i = 0; i < n; ++i) values.push_back(to_int64(PySequence_Fast_GET_ITEM(o, i)));
    }
    return IValue(std::move(values));
  }
  switch (a.type.base) {
    case BaseType::Tensor: return is_tensor(o) ? IValue(unpack_tensor(o)) : IValue(wrapped_scalar_tensor(to_scalar(o)));
    case BaseType::Scalar: return IValue(to_scalar(o));
    case BaseType::Float: {
      double d = PyFloat_AsDouble(o);
      if (d == -1 && PyErr_Occurred()) throw python_error();
      return IValue(d);
    }
    case BaseType::Int: return IValue(to_int64(o));
    case BaseType::Bool: return IValue(o == Py_True);
    case BaseType::ScalarType: return IValue(reinterpret_cast<THPDtype*>(o)->scalar_type);
    case BaseType::Device: {
      PyObject* s = PyObject_Str(o);
      if (!s) throw python_error();
      std::string text = PyUnicode_AsUTF8(s);
      Py_DECREF(s);
      return IValue(Device(text));
    }
  }
  return IValue();
}

ParsedArgs::~ParsedArgs() {
  for (PyObject* o : owned) Py_DECREF(o);
}

IValue ParsedArgs::ivalue(size_t i) const { return to_ivalue(schema->arguments[i], values[i]); }

PythonArgParser::PythonArgParser(std::string name, const std::vector<std::string>& signatures, bool is_method)
    : name_(std::move(name)), is_method_(is_method) {
  for (const auto& s : signatures) signatures_.push_back(parse_schema(s, "tensorlet"));
}

PythonArgParser::PythonArgParser(std::string name, FunctionSchema schema)
    : name_(std::move(name)), is_method_(false) {
  signatures_.push_back(std::move(schema));
}

bool PythonArgParser::try_bind(const FunctionSchema& s, PyObject* self, PyObject* args, PyObject* kwargs,
                               ParsedArgs& out) const {
  const auto& params = s.arguments;
  out.schema = &s;
  for (PyObject* o : out.owned) Py_DECREF(o);
  out.owned.clear();
  out.values.assign(params.size(), nullptr);
  size_t first = 0;
  if (is_method_) {
    if (params.empty() || params[0].type.base != BaseType::Tensor) return false;
    out.values[0] = self;
    first = 1;
  }
  std::vector<size_t> positional;
  for (size_t i = first; i < params.size(); ++i)
    if (!params[i].kwarg_only) positional.push_back(i);
  Py_ssize_t nargs = args ? PyTuple_GET_SIZE(args) : 0;
  // `zeros(2, 3)` / `x.view(2, 3)`: several ints for a leading int[] parameter.
  bool varargs = !positional.empty() && params[positional[0]].type.is_list && nargs > 1 &&
                 (positional.size() == 1 || static_cast<size_t>(nargs) > positional.size());
  if (varargs) {
    for (Py_ssize_t i = 0; i < nargs; ++i)
      if (!is_int(PyTuple_GET_ITEM(args, i))) return false;
    Py_INCREF(args);
    out.owned.push_back(args);
    out.values[positional[0]] = args;
  } else {
    if (static_cast<size_t>(nargs) > positional.size()) return false;
    for (Py_ssize_t i = 0; i < nargs; ++i) out.values[positional[i]] = PyTuple_GET_ITEM(args, i);
  }
  if (kwargs) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      const char* k = PyUnicode_AsUTF8(key);
      bool found = false;
      for (size_t i = first; i < params.size(); ++i) {
        if (params[i].name == k) {
          if (out.values[i]) return false;  // given twice
          out.values[i] = value;
          found = true;
        }
      }
      if (!found) return false;
    }
  }
  const bool numbers = numbers_as_tensors(s.name);
  for (size_t i = 0; i < params.size(); ++i) {
    PyObject* v = out.values[i];
    if (!v) {
      if (!params[i].default_text) return false;
      continue;
    }
    if (!matches(params[i], v, numbers)) return false;
  }
  return true;
}

int PythonArgParser::parse(PyObject* self, PyObject* args, PyObject* kwargs, ParsedArgs& out) const {
  for (size_t i = 0; i < signatures_.size(); ++i)
    if (try_bind(signatures_[i], self, args, kwargs, out)) return static_cast<int>(i);
  std::ostringstream msg;
  msg << name_ << "() received an invalid combination of arguments - got (";
  Py_ssize_t nargs = args ? PyTuple_GET_SIZE(args) : 0;
  bool comma = false;
  for (Py_ssize_t i = 0; i < nargs; ++i, comma = true) msg << (comma ? ", " : "") << type_name(PyTuple_GET_ITEM(args, i));
  if (kwargs) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      msg << (comma ? ", " : "") << PyUnicode_AsUTF8(key) << "=" << type_name(value);
      comma = true;
    }
  }
  msg << "), but expected one of:";
  for (const auto& s : signatures_) msg << "\n * " << s.str();
  throw TypeError(msg.str());
}

PyObject* from_ivalue(const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::None: Py_RETURN_NONE;
    case IValue::Tag::Tensor: return wrap(v.to_tensor());
    case IValue::Tag::Double: return PyFloat_FromDouble(v.to_double());
    case IValue::Tag::Int: return PyLong_FromLongLong(v.to_int());
    case IValue::Tag::Bool: return PyBool_FromLong(v.to_bool());
    case IValue::Tag::ScalarType: {
      PyObject* d = dtype_object(v.to_scalar_type());
      Py_INCREF(d);
      return d;
    }
    case IValue::Tag::Device: return PyUnicode_FromString(v.to_device().str().c_str());
    case IValue::Tag::IntList: {
      const auto& l = v.to_int_list();
      PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(l.size()));
      for (size_t i = 0; i < l.size(); ++i) PyTuple_SET_ITEM(t, i, PyLong_FromLongLong(l[i]));
      return t;
    }
  }
  Py_RETURN_NONE;
}

}  // namespace tensorlet::python
