#pragma once
// Error types shared by every layer. The Python bindings map each subclass onto
// the matching Python exception, so pick the subclass a Python user would expect.
#include <sstream>
#include <stdexcept>
#include <string>

namespace tensorlet {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct IndexError : Error {
  using Error::Error;
};
struct TypeError : Error {
  using Error::Error;
};
struct ValueError : Error {
  using Error::Error;
};
struct NotImplementedError : Error {
  using Error::Error;
};

namespace detail {
template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}
}  // namespace detail

}  // namespace tensorlet

#define TL_CHECK_T(ErrorType, cond, ...) \
  do {                                   \
    if (!(cond)) throw ::tensorlet::ErrorType(::tensorlet::detail::str_cat(__VA_ARGS__)); \
  } while (0)
#define TL_CHECK(cond, ...) TL_CHECK_T(Error, cond, __VA_ARGS__)
#define TL_CHECK_INDEX(cond, ...) TL_CHECK_T(IndexError, cond, __VA_ARGS__)
#define TL_CHECK_TYPE(cond, ...) TL_CHECK_T(TypeError, cond, __VA_ARGS__)
#define TL_CHECK_VALUE(cond, ...) TL_CHECK_T(ValueError, cond, __VA_ARGS__)
