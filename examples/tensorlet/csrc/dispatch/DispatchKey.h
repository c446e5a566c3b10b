#pragma once
// Dispatch keys in priority order: the highest key present in a call's key set
// picks the kernel. Alias keys (Composite*) are registration-only: the
// dispatcher folds them into the runtime keys when it computes the table.
#include <cstdint>
#include <string>

namespace tensorlet {

#define TENSORLET_FORALL_RUNTIME_KEYS(_) \
  _(Meta)                                \
  _(CPU)                                 \
  _(CUDA)                                \
  _(ADInplaceOrView)                     \
  _(Autograd)                            \
  _(Tracing)                             \
  _(Profiler)

enum class DispatchKey : uint8_t {
  Undefined = 0,
#define TL_KEY(k) k,
  TENSORLET_FORALL_RUNTIME_KEYS(TL_KEY)
#undef TL_KEY
  EndOfRuntimeKeys,
  CompositeExplicitAutograd = EndOfRuntimeKeys,
  CompositeImplicitAutograd,
  NumKeys,
};
constexpr int kNumRuntimeKeys = static_cast<int>(DispatchKey::EndOfRuntimeKeys);
constexpr int kNumDispatchKeys = static_cast<int>(DispatchKey::NumKeys);

const char* dispatch_key_name(DispatchKey k);
DispatchKey dispatch_key_from_name(const std::string& name);  // throws on unknown names

inline bool is_backend_key(DispatchKey k) {
  return k == DispatchKey::CPU || k == DispatchKey::CUDA || k == DispatchKey::Meta;
}

class DispatchKeySet {
 public:
  constexpr DispatchKeySet() = default;
  constexpr explicit DispatchKeySet(DispatchKey k) : bits_(k == DispatchKey::Undefined ? 0 : 1u << static_cast<int>(k)) {}
  static constexpr DispatchKeySet from_bits(uint32_t b) {
    DispatchKeySet s;
    s.bits_ = b;
    return s;
  }
  // Every key strictly below `k`: what a kernel for `k` redispatches to.
  static constexpr DispatchKeySet below(DispatchKey k) { return from_bits((1u << static_cast<int>(k)) - 2u); }

  constexpr bool has(DispatchKey k) const { return (bits_ & DispatchKeySet(k).bits_) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr DispatchKeySet operator|(DispatchKeySet o) const { return from_bits(bits_ | o.bits_); }
  constexpr DispatchKeySet operator&(DispatchKeySet o) const { return from_bits(bits_ & o.bits_); }
  constexpr DispatchKeySet operator-(DispatchKeySet o) const { return from_bits(bits_ & ~o.bits_); }
  DispatchKey highest() const {
    return bits_ == 0 ? DispatchKey::Undefined : static_cast<DispatchKey>(31 - __builtin_clz(bits_));
  }
  constexpr uint32_t bits() const { return bits_; }

 private:
  uint32_t bits_ = 0;
};

}  // namespace tensorlet
