#pragma once
// Shared pieces of the CPython bindings (libtensorlet_python).
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <memory>
#include <string>
#include <vector>

#include "core/Tensor.h"
#include "dispatch/Schema.h"

namespace tensorlet::python {

// Thrown when a Python exception is already set; the TL_PY_END handler just returns NULL.
struct python_error : std::exception {};

void set_python_error_from_current_exception();

#define TL_PY_BEGIN try {
#define TL_PY_END                                            \
  }                                                          \
  catch (...) {                                              \
    ::tensorlet::python::set_python_error_from_current_exception(); \
    return nullptr;                                          \
  }

struct GilRelease {
  GilRelease() : state_(PyEval_SaveThread()) {}
  ~GilRelease() { PyEval_RestoreThread(state_); }
  PyThreadState* state_;
};

// ---- the Tensor type ----------------------------------------------------------
struct THPTensor {
  PyObject_HEAD
  Tensor tensor;
};
extern PyTypeObject THPTensorType;
bool is_tensor(PyObject* obj);
const Tensor& unpack_tensor(PyObject* obj);
// Returns the one Python object for this tensor (creating it on first use).
PyObject* wrap(Tensor t);
PyObject* wrap(const std::tuple<Tensor, Tensor>& t);
void init_tensor_type(PyObject* module);
// After the generated functions are in `module`: the fallbacks of the number protocol.
void init_tensor_number_methods(PyObject* module);

// ---- dtypes ------------------------------------------------------------------------
struct THPDtype {
  PyObject_HEAD
  ScalarType scalar_type;
};
extern PyTypeObject THPDtypeType;
PyObject* dtype_object(ScalarType t);  // borrowed
void init_dtypes(PyObject* module);

// ---- argument parsing ------------------------------------------------------------
struct ParsedArgs {
  const FunctionSchema* schema = nullptr;
  std::vector<PyObject*> values;  // borrowed (or owned below); nullptr means "use the default"
  std::vector<PyObject*> owned;
  ~ParsedArgs();

  IValue ivalue(size_t i) const;
  Tensor tensor(size_t i) const { return ivalue(i).to_tensor(); }
  std::optional<Tensor> optional_tensor(size_t i) const { return ivalue(i).to_optional_tensor(); }
  Scalar scalar(size_t i) const { return ivalue(i).to_scalar(); }
  std::optional<Scalar> optional_scalar(size_t i) const { return ivalue(i).to_optional_scalar(); }
  double to_double(size_t i) const { return ivalue(i).to_double(); }
  std::optional<double> optional_to_double(size_t i) const { return ivalue(i).to_optional_double(); }
  int64_t to_int(size_t i) const { return ivalue(i).to_int(); }
  std::optional<int64_t> optional_to_int(size_t i) const { return ivalue(i).to_optional_int(); }
  bool to_bool(size_t i) const { return ivalue(i).to_bool(); }
  std::vector<int64_t> int_list(size_t i) const { return ivalue(i).to_int_list(); }
  std::optional<std::vector<int64_t>> optional_int_list(size_t i) const { return ivalue(i).to_optional_int_list(); }
  ScalarType scalar_type(size_t i) const { return ivalue(i).to_scalar_type(); }
  std::optional<ScalarType> optional_scalar_type(size_t i) const { return ivalue(i).to_optional_scalar_type(); }
  Device device(size_t i) const { return ivalue(i).to_device(); }
  std::optional<Device> optional_device(size_t i) const { return ivalue(i).to_optional_device(); }
};

class PythonArgParser {
 public:
  PythonArgParser(std::string name, const std::vector<std::string>& signatures, bool is_method);
  // One schema, bound as a function (used by _call_op).
  PythonArgParser(std::string name, FunctionSchema schema);
  // Index of the first signature that accepts the arguments; throws TypeError otherwise.
  int parse(PyObject* self, PyObject* args, PyObject* kwargs, ParsedArgs& out) const;

 private:
  bool try_bind(const FunctionSchema& s, PyObject* self, PyObject* args, PyObject* kwargs, ParsedArgs& out) const;
  std::string name_;
  std::vector<FunctionSchema> signatures_;
  bool is_method_;
};

IValue to_ivalue(const SchemaArgument& arg, PyObject* obj);
PyObject* from_ivalue(const IValue& v);

PyMethodDef* generated_functions();
PyMethodDef* generated_methods();

}  // namespace tensorlet::python
