// Status and StatusOr: how errors cross module boundaries in tpusim.
//
// A Status is OK or carries a code, a one-line message and, where the error
// comes from source text, a location. Codes map to the CLI's exit statuses:
// input errors (kInvalidArgument, kOutOfRange, kNotFound) exit 2, unsupported
// features (kUnimplemented) exit 3, anything else exits 1.
#ifndef TPUSIM_BASE_STATUS_H_
#define TPUSIM_BASE_STATUS_H_

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace tpusim {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // malformed or ill-typed input
  kOutOfRange,         // an index or value outside what the input allows
  kNotFound,           // a named thing (function, file, argument) is missing
  kUnimplemented,      // valid input that tpusim does not support
  kResourceExhausted,  // too large for host memory or a configured limit
  kFailedPrecondition, // a check in a conformance file did not hold
  kInternal,           // a bug in tpusim
  kCancelled,          // stopped on request (Ctrl-C) before finishing
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "code: message"; for located errors the message already starts with
  // "file:line:col: ".
  std::string ToString() const;

  // Returns a copy whose message is prefixed with `context` + ": ".
  Status WithContext(const std::string& context) const;

  // Returns a copy prefixed with "file:line:col: " unless this status already
  // carries a location (the innermost location wins).
  Status WithLocation(const std::string& location) const;
  bool has_location() const { return has_location_; }

  // Exit status for the CLI: 0 ok, 2 input error, 3 unsupported, 130
  // interrupted, 1 other.
  int ExitCode() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  bool has_location_ = false;
};

inline Status InvalidArgument(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
inline Status OutOfRange(std::string m) {
  return Status(StatusCode::kOutOfRange, std::move(m));
}
inline Status NotFound(std::string m) {
  return Status(StatusCode::kNotFound, std::move(m));
}
inline Status Unimplemented(std::string m) {
  return Status(StatusCode::kUnimplemented, std::move(m));
}
inline Status ResourceExhausted(std::string m) {
  return Status(StatusCode::kResourceExhausted, std::move(m));
}
inline Status FailedPrecondition(std::string m) {
  return Status(StatusCode::kFailedPrecondition, std::move(m));
}
inline Status Internal(std::string m) {
  return Status(StatusCode::kInternal, std::move(m));
}
inline Status Cancelled(std::string m) {
  return Status(StatusCode::kCancelled, std::move(m));
}

// Holds either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& s) : v_(s) {}  // REQUIRES: !s.ok()
  StatusOr(Status&& s) : v_(std::move(s)) {}
  StatusOr(const T& value) : v_(value) {}
  StatusOr(T&& value) : v_(std::move(value)) {}
  template <typename U,
            typename = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                        !std::is_same_v<std::decay_t<U>, Status>>>
  StatusOr(U&& value) : v_(T(std::forward<U>(value))) {}

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

  // REQUIRES: ok().
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<Status, T> v_;
};

}  // namespace tpusim

#define TPUSIM_CONCAT_INNER_(a, b) a##b
#define TPUSIM_CONCAT_(a, b) TPUSIM_CONCAT_INNER_(a, b)

#define TPUSIM_RETURN_IF_ERROR(expr)            \
  do {                                          \
    ::tpusim::Status _st = (expr);              \
    if (!_st.ok()) return _st;                  \
  } while (0)

#define TPUSIM_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

#define TPUSIM_ASSIGN_OR_RETURN(lhs, expr) \
  TPUSIM_ASSIGN_OR_RETURN_IMPL_(TPUSIM_CONCAT_(_so_, __LINE__), lhs, expr)

#endif  // TPUSIM_BASE_STATUS_H_
