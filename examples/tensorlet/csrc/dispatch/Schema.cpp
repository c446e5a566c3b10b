#include "dispatch/Schema.h"

#include <cctype>
#include <cstdlib>
#include <sstream>

namespace tensorlet {
namespace {

struct BaseTypeName {
  const char* name;
  BaseType type;
};
constexpr BaseTypeName kBaseTypes[] = {
    {"Tensor", BaseType::Tensor}, {"Scalar", BaseType::Scalar}, {"float", BaseType::Float},
    {"int", BaseType::Int},       {"bool", BaseType::Bool},     {"ScalarType", BaseType::ScalarType},
    {"Device", BaseType::Device},
};

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n"), e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Splits at top-level commas (not inside [] or ()).
std::vector<std::string> split_top_level(const std::string& s) {
  std::vector<std::string> parts;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty()) parts.push_back(trim(cur));
  return parts;
}

[[noreturn]] void fail(const std::string& text, const std::string& why) {
  throw ValueError("bad schema '" + text + "': " + why);
}

IValue parse_default(const SchemaType& t, const std::string& v, const std::string& schema) {
  if (v == "None") return IValue();
  if (t.is_list) {
    std::vector<int64_t> values;
    std::string body = v;
    if (!body.empty() && body.front() == '[') body = body.substr(1, body.size() - 2);
    for (const auto& p : split_top_level(body)) values.push_back(std::strtoll(p.c_str(), nullptr, 10));
    return IValue(values);
  }
  switch (t.base) {
    case BaseType::Bool:
      if (v != "True" && v != "False") fail(schema, "bad bool default " + v);
      return IValue(v == "True");
    case BaseType::Int:
      return IValue(int64_t(std::strtoll(v.c_str(), nullptr, 10)));
    case BaseType::Float:
      return IValue(std::strtod(v.c_str(), nullptr));
    case BaseType::Scalar:
      if (v.find_first_of(".eE") != std::string::npos && v.find("0x") == std::string::npos)
        return IValue(std::strtod(v.c_str(), nullptr));
      return IValue(int64_t(std::strtoll(v.c_str(), nullptr, 10)));
    case BaseType::ScalarType:
      return IValue(scalar_type_from_name(v));
    case BaseType::Device:
      return IValue(Device(v));
    case BaseType::Tensor:
      break;
  }
  fail(schema, "unsupported default " + v);
}

SchemaArgument parse_argument(const std::string& text, const std::string& schema) {
  SchemaArgument arg;
  std::string decl = text;
  auto eq = decl.find('=');
  if (eq != std::string::npos) {
    arg.default_text = trim(decl.substr(eq + 1));
    decl = trim(decl.substr(0, eq));
  }
  auto space = decl.find_last_of(' ');
  std::string type = space == std::string::npos ? decl : decl.substr(0, space);
  arg.name = space == std::string::npos ? "" : decl.substr(space + 1);
  // Alias annotation: Tensor(a!) / Tensor(a)
  auto paren = type.find('(');
  if (paren != std::string::npos) {
    auto close = type.find(')', paren);
    arg.alias = type.substr(paren + 1, close - paren - 1);
    if (!arg.alias.empty() && arg.alias.back() == '!') {
      arg.is_mutable = true;
      arg.alias.pop_back();
    }
    type = type.substr(0, paren) + type.substr(close + 1);
  }
  if (!type.empty() && type.back() == '?') {
    arg.type.is_optional = true;
    type.pop_back();
  }
  auto bracket = type.find('[');
  if (bracket != std::string::npos) {
    arg.type.is_list = true;
    arg.type.list_size = std::atoi(type.c_str() + bracket + 1);
    type = type.substr(0, bracket);
  }
  bool found = false;
  for (const auto& b : kBaseTypes) {
    if (type == b.name) {
      arg.type.base = b.type;
      found = true;
    }
  }
  if (!found) fail(schema, "unknown type '" + type + "'");
  if (arg.default_text) arg.default_value = parse_default(arg.type, *arg.default_text, schema);
  return arg;
}

}  // namespace

std::string SchemaType::str() const {
  std::string s;
  for (const auto& b : kBaseTypes)
    if (b.type == base) s = b.name;
  if (is_list) s += list_size ? "[" + std::to_string(list_size) + "]" : "[]";
  if (is_optional) s += "?";
  return s;
}

std::string qualify_op_name(const std::string& name, const std::string& default_ns) {
  return name.find("::") == std::string::npos ? default_ns + "::" + name : name;
}

FunctionSchema parse_schema(const std::string& text, const std::string& default_ns) {
  FunctionSchema schema;
  auto open = text.find('(');
  auto arrow = text.rfind("->");
  if (open == std::string::npos || arrow == std::string::npos || arrow < open) fail(text, "expected 'name(args) -> ret'");
  auto close = text.rfind(')', arrow);
  std::string full_name = trim(text.substr(0, open));
  auto colons = full_name.find("::");
  schema.ns = colons == std::string::npos ? default_ns : full_name.substr(0, colons);
  if (colons != std::string::npos) full_name = full_name.substr(colons + 2);
  auto dot = full_name.find('.');
  schema.name = full_name.substr(0, dot);
  if (dot != std::string::npos) schema.overload = full_name.substr(dot + 1);

  bool kwarg_only = false;
  for (const auto& part : split_top_level(text.substr(open + 1, close - open - 1))) {
    if (part == "*") {
      kwarg_only = true;
      continue;
    }
    SchemaArgument arg = parse_argument(part, text);
    arg.kwarg_only = kwarg_only;
    schema.arguments.push_back(std::move(arg));
  }
  std::string ret = trim(text.substr(arrow + 2));
  if (!ret.empty() && ret.front() == '(' && ret.back() == ')') ret = ret.substr(1, ret.size() - 2);
  if (ret != "()")
    for (const auto& part : split_top_level(ret)) schema.returns.push_back(parse_argument(part, text));
  return schema;
}

std::string FunctionSchema::qualified_name() const {
  return ns + "::" + name + (overload.empty() ? "" : "." + overload);
}

bool FunctionSchema::is_inplace() const { return !name.empty() && name.back() == '_'; }
bool FunctionSchema::is_out() const {
  for (const auto& a : arguments)
    if (a.is_mutable && a.kwarg_only) return true;
  return false;
}

std::string FunctionSchema::str() const {
  auto arg_str = [](const SchemaArgument& a) {
    std::string t = a.type.str();
    if (!a.alias.empty()) {
      auto insert_at = t.find_first_of("[?");
      if (insert_at == std::string::npos) insert_at = t.size();
      t.insert(insert_at, "(" + a.alias + (a.is_mutable ? "!" : "") + ")");
    }
    std::string s = a.name.empty() ? t : t + " " + a.name;
    if (a.default_text) s += "=" + *a.default_text;
    return s;
  };
  std::ostringstream out;
  out << name << (overload.empty() ? "" : "." + overload) << "(";
  bool star = false;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (i) out << ", ";
    if (arguments[i].kwarg_only && !star) {
      out << "*, ";
      star = true;
    }
    out << arg_str(arguments[i]);
  }
  out << ") -> ";
  if (returns.size() == 1) out << arg_str(returns[0]);
  else {
    out << "(";
    for (size_t i = 0; i < returns.size(); ++i) out << (i ? ", " : "") << arg_str(returns[i]);
    out << ")";
  }
  return out.str();
}

const char* IValue::tag_name(Tag t) {
  switch (t) {
    case Tag::None: return "None";
    case Tag::Tensor: return "Tensor";
    case Tag::Double: return "float";
    case Tag::Int: return "int";
    case Tag::Bool: return "bool";
    case Tag::IntList: return "int[]";
    case Tag::ScalarType: return "ScalarType";
    case Tag::Device: return "Device";
  }
  return "?";
}

}  // namespace tensorlet
