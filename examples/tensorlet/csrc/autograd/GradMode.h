#pragma once
// Whether autograd records history on this thread (no_grad() turns it off). An
// autograd policy, read by the autograd kernels: the dispatcher routes a call to the
// Autograd key whenever an input requires grad, and the kernel decides whether to record.
namespace tensorlet {

struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : prev_(GradMode::is_enabled()) { GradMode::set_enabled(enabled); }
  ~AutoGradMode() { GradMode::set_enabled(prev_); }

 private:
  bool prev_;
};

}  // namespace tensorlet
