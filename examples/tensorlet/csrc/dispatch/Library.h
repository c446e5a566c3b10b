#pragma once
// Static registration, PyTorch TORCH_LIBRARY style:
//
//   TENSORLET_LIBRARY(myns, m) { m.def("scale(Tensor self, float factor) -> Tensor"); }
//   TENSORLET_LIBRARY_IMPL(myns, CPU, m) { m.impl("scale", &boxed_scale_cpu); }
//   TENSORLET_LIBRARY_FALLBACK(Tracing, m) { m.fallback(&log_and_redispatch); }
//
// The registrar objects run when their shared library is loaded. Do not put
// them in a static archive: the linker drops object files nobody references,
// and with them the registrations.
#include <string>

#include "dispatch/Dispatcher.h"

namespace tensorlet {

class Library {
 public:
  enum class Kind { Def, Impl, Fallback };
  Library(Kind kind, std::string ns, DispatchKey key, const char* file, int line);

  Library& def(const std::string& schema);
  // For Impl libraries: registers for the library's key.
  Library& impl(const std::string& name, BoxedKernelFn fn, const std::string& debug_name = "");
  // For Def libraries or to name another key explicitly.
  Library& impl(const std::string& name, DispatchKey key, BoxedKernelFn fn, const std::string& debug_name = "");
  Library& fallback(BoxedKernelFn fn, const std::string& debug_name = "");

 private:
  Kind kind_;
  std::string ns_;
  DispatchKey key_;
  std::string where_;
};

struct LibraryRegistrar {
  LibraryRegistrar(Library::Kind kind, const char* ns, DispatchKey key, void (*init)(Library&), const char* file,
                   int line) {
    Library lib(kind, ns, key, file, line);
    init(lib);
  }
};

}  // namespace tensorlet

#define TL_CONCAT_INNER(a, b) a##b
#define TL_CONCAT(a, b) TL_CONCAT_INNER(a, b)

#define TENSORLET_LIBRARY(ns, m) \
  TL_LIBRARY_REGISTRAR(TL_CONCAT(tl_def_##ns##_, __COUNTER__), Def, #ns, Undefined, m)
#define TENSORLET_LIBRARY_IMPL(ns, key, m) \
  TL_LIBRARY_REGISTRAR(TL_CONCAT(tl_impl_##ns##_##key##_, __COUNTER__), Impl, #ns, key, m)
#define TENSORLET_LIBRARY_FALLBACK(key, m) \
  TL_LIBRARY_REGISTRAR(TL_CONCAT(tl_fallback_##key##_, __COUNTER__), Fallback, "_", key, m)

#define TL_LIBRARY_REGISTRAR(uid, kind, ns, key, m)                                                        \
  static void TL_CONCAT(uid, _init)(::tensorlet::Library&);                                                 \
  static const ::tensorlet::LibraryRegistrar TL_CONCAT(uid, _registrar)(                                    \
      ::tensorlet::Library::Kind::kind, ns, ::tensorlet::DispatchKey::key, &TL_CONCAT(uid, _init), __FILE__, \
      __LINE__);                                                                                            \
  static void TL_CONCAT(uid, _init)(::tensorlet::Library & m)
