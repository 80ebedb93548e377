// Status and Result<T>: how maestro reports expected failures.
//
// Every operation that can fail for a reason the caller must handle (bad input,
// a missing row, a lost lease, an unreachable server) returns a Status or a
// Result<T> instead of throwing. Exceptions are reserved for programming errors
// and are converted to Status at library boundaries. Both types are cheap to
// move and are [[nodiscard]] so that an ignored failure is a compile error.
//
// Thread safety: values; no shared state.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace maestro {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // bad input from a user or a file; `field` names what
  kNotFound,           // no such task / job / request
  kConflict,           // state does not allow the operation (HTTP 409)
  kLeaseLost,          // the caller's job lease was taken over (fencing)
  kUnavailable,        // transient: retry may succeed (busy DB, 5xx, network)
  kResourceExhausted,  // limits: body too large, context overflow, quota
  kCancelled,          // cooperative cancellation observed
  kDeadlineExceeded,   // a timeout elapsed
  kUnimplemented,      // capability arrives in a later release
  kInternal,           // a bug or corrupted state
  kUnauthenticated,    // no valid credential, or a token that fails a check (HTTP 401)
  kPermissionDenied,   // a known caller whose role or scope does not allow it (HTTP 403)
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message, std::string field = {})
      : code_(code), message_(std::move(message)), field_(std::move(field)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // The input field the error is about ("instruction", "jobs.lease_ms"), or empty.
  const std::string& field() const { return field_; }

  // "NOT_FOUND: job 01J… not found".
  std::string ToString() const;

  // Marks a deliberately ignored status.
  void IgnoreError() const {}

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::string field_;
};

inline Status InvalidArgument(std::string msg, std::string field = {}) {
  return Status(StatusCode::kInvalidArgument, std::move(msg), std::move(field));
}
inline Status NotFound(std::string msg) { return Status(StatusCode::kNotFound, std::move(msg)); }
inline Status Conflict(std::string msg) { return Status(StatusCode::kConflict, std::move(msg)); }
inline Status LeaseLost(std::string msg) { return Status(StatusCode::kLeaseLost, std::move(msg)); }
inline Status Unavailable(std::string msg) {
  return Status(StatusCode::kUnavailable, std::move(msg));
}
inline Status Internal(std::string msg) { return Status(StatusCode::kInternal, std::move(msg)); }
inline Status Unimplemented(std::string msg) {
  return Status(StatusCode::kUnimplemented, std::move(msg));
}
inline Status Unauthenticated(std::string msg) {
  return Status(StatusCode::kUnauthenticated, std::move(msg));
}
inline Status PermissionDenied(std::string msg) {
  return Status(StatusCode::kPermissionDenied, std::move(msg));
}

// Result<T> holds either a T or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).ok() && "Result constructed from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }

  // REQUIRES: ok()
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace maestro

// Returns early from the enclosing function when `expr` yields a non-OK Status.
#define MAESTRO_RETURN_IF_ERROR(expr) \
  do {                                \
    ::maestro::Status _st = (expr);   \
    if (!_st.ok()) return _st;        \
  } while (0)

#define MAESTRO_CONCAT_INNER(a, b) a##b
#define MAESTRO_CONCAT(a, b) MAESTRO_CONCAT_INNER(a, b)
// Declares `lhs` from a Result<T> or returns its Status.
#define MAESTRO_ASSIGN_OR_RETURN(lhs, expr) \
  MAESTRO_ASSIGN_OR_RETURN_IMPL(MAESTRO_CONCAT(_res_, __LINE__), lhs, expr)
#define MAESTRO_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()
