#pragma once
// Operator schemas in the syntax of ops.yaml, e.g.
//   add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
// The dispatcher reads them to find tensor/device arguments and mutated inputs;
// the Python argument parser reads them to bind Python arguments.
#include <optional>
#include <string>
#include <vector>

#include "dispatch/IValue.h"

namespace tensorlet {

enum class BaseType : uint8_t { Tensor, Scalar, Float, Int, Bool, ScalarType, Device };

struct SchemaType {
  BaseType base = BaseType::Tensor;
  bool is_list = false;     // int[] / int[N]
  int list_size = 0;        // N of int[N] (0 when absent)
  bool is_optional = false;
  std::string str() const;
};

struct SchemaArgument {
  std::string name;
  SchemaType type;
  bool kwarg_only = false;
  bool is_mutable = false;   // Tensor(a!)
  std::string alias;         // "a" of Tensor(a) / Tensor(a!)
  std::optional<std::string> default_text;
  IValue default_value;      // parsed from default_text
};

struct FunctionSchema {
  std::string ns;        // "tensorlet"
  std::string name;      // "add"
  std::string overload;  // "out"
  std::vector<SchemaArgument> arguments;
  std::vector<SchemaArgument> returns;

  std::string qualified_name() const;  // "tensorlet::add.out"
  std::string str() const;             // without the namespace
  bool is_inplace() const;
  bool is_out() const;
};

// `default_ns` applies when the text has no "ns::" prefix.
FunctionSchema parse_schema(const std::string& text, const std::string& default_ns);
// Parses "name.overload" / "ns::name.overload" into a qualified name.
std::string qualify_op_name(const std::string& name, const std::string& default_ns);

}  // namespace tensorlet
