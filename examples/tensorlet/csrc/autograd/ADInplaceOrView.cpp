// The ADInplaceOrView key's kernel: autograd's bookkeeping for writes, kept out of
// the dispatcher as in PyTorch (where the codegen'd ADInplaceOrView kernels do it).
//
// A write through a Tensor(a!) argument (in-place and out= ops) bumps the
// argument's version counter, shared with its views, so that a SavedVariable can
// tell it was overwritten after being saved. It bumps before the kernel runs so
// that an in-place autograd kernel, which calls down to here, saves its result at
// the final version.
//
// Every call passes this key once: the kernel hides it from the calls the kernels
// below make, so a write an op does internally (zeros filling its fresh result,
// clone copying into its own, an out= kernel copying into `out`) is no second
// bump, and only the outermost write counts.
#include "dispatch/Dispatcher.h"
#include "dispatch/Library.h"

namespace tensorlet {

namespace {
void bump_written_versions(const OperatorHandle& op, DispatchKeySet keys, Stack* stack) {
  const OperatorEntry& e = *op.entry();
  IValue* args = stack->data() + stack->size() - e.num_args;
  for (int i : e.mutable_args)
    if (args[i].is_tensor()) args[i].to_tensor().impl()->bump_version();
  ExcludeDispatchKeyGuard below(DispatchKeySet(DispatchKey::ADInplaceOrView));
  Dispatcher::singleton().redispatch(op, keys & DispatchKeySet::below(DispatchKey::ADInplaceOrView), stack);
}
}  // namespace

TENSORLET_LIBRARY_FALLBACK(ADInplaceOrView, m) { m.fallback(&bump_written_versions, "bump_written_versions"); }

}  // namespace tensorlet
