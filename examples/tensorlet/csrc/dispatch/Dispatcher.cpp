#include "dispatch/Dispatcher.h"

#include <algorithm>

#include "dispatch/Library.h"

namespace tensorlet {

const char* dispatch_key_name(DispatchKey k) {
  switch (k) {
#define TL_KEY(key) \
  case DispatchKey::key: return #key;
    TENSORLET_FORALL_RUNTIME_KEYS(TL_KEY)
#undef TL_KEY
    case DispatchKey::CompositeExplicitAutograd: return "CompositeExplicitAutograd";
    case DispatchKey::CompositeImplicitAutograd: return "CompositeImplicitAutograd";
    default: return "Undefined";
  }
}

DispatchKey dispatch_key_from_name(const std::string& name) {
  for (int i = 1; i < kNumDispatchKeys; ++i)
    if (name == dispatch_key_name(static_cast<DispatchKey>(i))) return static_cast<DispatchKey>(i);
  throw ValueError("unknown dispatch key '" + name + "'");
}

namespace {
void missing_kernel(const OperatorHandle& op, DispatchKeySet keys, Stack*) {
  throw NotImplementedError("no kernel for op " + op.name() + " on key " + dispatch_key_name(keys.highest()));
}

DispatchKey key_for_device(DeviceType t) {
  switch (t) {
    case DeviceType::CPU: return DispatchKey::CPU;
    case DeviceType::CUDA: return DispatchKey::CUDA;
    case DeviceType::Meta: return DispatchKey::Meta;
  }
  return DispatchKey::CPU;
}
}  // namespace

const FunctionSchema& OperatorHandle::schema() const {
  TL_CHECK(entry_->schema, "operator ", entry_->name, " has kernels but no schema (missing def)");
  return *entry_->schema;
}

Dispatcher& Dispatcher::singleton() {
  // Leaked on purpose: kernels in other libraries may still be unregistering or
  // running during static destruction.
  static Dispatcher* d = new Dispatcher();
  return *d;
}

OperatorEntry& Dispatcher::entry_locked(const std::string& name) {
  auto& slot = operators_[name];
  if (!slot) {
    slot = std::make_unique<OperatorEntry>();
    slot->name = name;
    update_table(*slot);
  }
  return *slot;
}

void Dispatcher::def(const std::string& schema_text, const std::string& ns, const std::string& debug) {
  FunctionSchema schema = parse_schema(schema_text, ns);
  std::lock_guard<std::mutex> lock(mutex_);
  OperatorEntry& e = entry_locked(schema.qualified_name());
  TL_CHECK(!e.schema, "operator ", e.name, " defined twice (again at ", debug, ")");
  e.tensor_args.clear();
  e.device_args.clear();
  e.mutable_args.clear();
  for (size_t i = 0; i < schema.arguments.size(); ++i) {
    const auto& a = schema.arguments[i];
    if (a.type.base == BaseType::Tensor && !a.type.is_list) e.tensor_args.push_back(static_cast<int>(i));
    if (a.type.base == BaseType::Device) e.device_args.push_back(static_cast<int>(i));
    if (a.is_mutable) e.mutable_args.push_back(static_cast<int>(i));
  }
  e.num_args = schema.arguments.size();
  e.schema = std::move(schema);
}

void Dispatcher::impl(const std::string& name, DispatchKey key, KernelFunction kernel) {
  std::lock_guard<std::mutex> lock(mutex_);
  OperatorEntry& e = entry_locked(name);
  // Later registrations override earlier ones (how an extension replaces a kernel).
  e.kernels[static_cast<int>(key)] = std::move(kernel);
  update_table(e);
}

void Dispatcher::fallback(DispatchKey key, KernelFunction kernel) {
  TL_CHECK(static_cast<int>(key) < kNumRuntimeKeys, "fallbacks must be registered for runtime keys");
  std::lock_guard<std::mutex> lock(mutex_);
  fallbacks_[static_cast<int>(key)] = std::move(kernel);
  for (auto& [name, e] : operators_) update_table(*e);
}

void Dispatcher::update_table(OperatorEntry& e) {
  auto registered = [&](DispatchKey k) -> const std::optional<KernelFunction>& {
    return e.kernels[static_cast<int>(k)];
  };
  const auto& explicit_composite = registered(DispatchKey::CompositeExplicitAutograd);
  const auto& implicit_composite = registered(DispatchKey::CompositeImplicitAutograd);
  bool has_backend_kernel = registered(DispatchKey::CPU) || registered(DispatchKey::CUDA) ||
                            registered(DispatchKey::Meta) || explicit_composite;
  for (int i = 0; i < kNumRuntimeKeys; ++i) {
    auto key = static_cast<DispatchKey>(i);
    KernelFunction& slot = e.table[i];
    if (registered(key)) slot = *registered(key);
    else if (is_backend_key(key) && explicit_composite) slot = *explicit_composite;
    else if (is_backend_key(key) && implicit_composite) slot = *implicit_composite;
    else if (key == DispatchKey::Autograd && implicit_composite && !has_backend_kernel) slot = *implicit_composite;
    else if (fallbacks_[i]) slot = *fallbacks_[i];
    else slot = KernelFunction{&missing_kernel, "missing"};
  }
}

std::optional<OperatorHandle> Dispatcher::find(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = operators_.find(name);
  if (it == operators_.end()) return std::nullopt;
  return OperatorHandle(it->second.get());
}

OperatorHandle Dispatcher::find_or_throw(const std::string& name) {
  auto op = find(name);
  if (!op) {
    // Allow "add" for "add" with an empty overload name but also give a hint.
    throw ValueError("unknown operator '" + name + "' (expected 'ns::name.overload')");
  }
  return *op;
}

std::vector<std::string> Dispatcher::operator_names() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> names;
  for (auto& [name, e] : operators_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

DispatchKeySet Dispatcher::compute_keys(const OperatorEntry& e, const Stack& stack) const {
  size_t base = stack.size() - e.num_args;
  DispatchKeySet keys;
  bool wants_grad = false;
  for (int i : e.tensor_args) {
    const IValue& v = stack[base + i];
    if (!v.is_tensor()) continue;
    const Tensor& t = v.to_tensor();
    keys = keys | DispatchKeySet(key_for_device(t.device().type));
    wants_grad = wants_grad || t.requires_grad();
  }
  for (int i : e.device_args) {
    const IValue& v = stack[base + i];
    if (v.is_device()) keys = keys | DispatchKeySet(key_for_device(v.to_device().type));
  }
  if (keys.empty()) keys = DispatchKeySet(DispatchKey::CPU);  // factories default to the CPU
  // Grad mode is the autograd kernels' business (they record history only while it is
  // on); the dispatcher only routes calls with an input that requires grad to them.
  if (wants_grad) keys = keys | DispatchKeySet(DispatchKey::Autograd);
  // Every call passes ADInplaceOrView, as every PyTorch tensor carries that key:
  // the autograd layer's kernel there keeps the version counters (what a write
  // means to autograd is its business) and hides the key from the calls kernels
  // make below it.
  keys = keys | DispatchKeySet(DispatchKey::ADInplaceOrView);
  const LocalDispatchKeySet& local = local_dispatch_keys();
  return (keys | local.included) - local.excluded;
}

void Dispatcher::call(const OperatorHandle& op, Stack* stack) {
  OperatorEntry& e = *op.entry();
  TL_CHECK(e.schema, "operator ", e.name, " has kernels but no schema (missing def)");
  TL_CHECK(stack->size() >= e.num_args, "operator ", e.name, ": expected ", e.num_args, " arguments on the stack");
  DispatchKeySet keys = compute_keys(e, *stack);
  e.table[static_cast<int>(keys.highest())].fn(op, keys, stack);
}

void Dispatcher::redispatch(const OperatorHandle& op, DispatchKeySet keys, Stack* stack) {
  const KernelFunction& k = op.entry()->table[static_cast<int>(keys.highest())];
  k.fn(op, keys, stack);
}

// ---- Library -----------------------------------------------------------------

Library::Library(Kind kind, std::string ns, DispatchKey key, const char* file, int line)
    : kind_(kind), ns_(std::move(ns)), key_(key), where_(std::string(file) + ":" + std::to_string(line)) {}

Library& Library::def(const std::string& schema) {
  TL_CHECK(kind_ == Kind::Def, "def() is only allowed in TENSORLET_LIBRARY (at ", where_, ")");
  Dispatcher::singleton().def(schema, ns_, where_);
  return *this;
}

Library& Library::impl(const std::string& name, BoxedKernelFn fn, const std::string& debug_name) {
  TL_CHECK(kind_ == Kind::Impl, "impl(name, fn) needs a TENSORLET_LIBRARY_IMPL block (at ", where_, ")");
  return impl(name, key_, fn, debug_name);
}

Library& Library::impl(const std::string& name, DispatchKey key, BoxedKernelFn fn, const std::string& debug_name) {
  Dispatcher::singleton().impl(qualify_op_name(name, ns_), key,
                               KernelFunction{fn, debug_name.empty() ? name : debug_name});
  return *this;
}

Library& Library::fallback(BoxedKernelFn fn, const std::string& debug_name) {
  TL_CHECK(kind_ == Kind::Fallback, "fallback() needs a TENSORLET_LIBRARY_FALLBACK block (at ", where_, ")");
  Dispatcher::singleton().fallback(
      key_, KernelFunction{fn, debug_name.empty() ? std::string("fallback(") + dispatch_key_name(key_) + ")" : debug_name});
  return *this;
}

}  // namespace tensorlet
