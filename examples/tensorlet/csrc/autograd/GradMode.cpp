#include "autograd/GradMode.h"

namespace tensorlet {
namespace {
thread_local bool t_grad_enabled = true;
}  // namespace

bool GradMode::is_enabled() { return t_grad_enabled; }
void GradMode::set_enabled(bool enabled) { t_grad_enabled = enabled; }

}  // namespace tensorlet
