#include "core/status.h"

namespace maestro {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case StatusCode::kNotFound:
      return "NOT_FOUND";
    case StatusCode::kConflict:
      return "CONFLICT";
    case StatusCode::kLeaseLost:
      return "LEASE_LOST";
    case StatusCode::kUnavailable:
      return "UNAVAILABLE";
    case StatusCode::kResourceExhausted:
      return "RESOURCE_EXHAUSTED";
    case StatusCode::kCancelled:
      return "CANCELLED";
    case StatusCode::kDeadlineExceeded:
      return "DEADLINE_EXCEEDED";
    case StatusCode::kUnimplemented:
      return "UNIMPLEMENTED";
    case StatusCode::kInternal:
      return "INTERNAL";
    case StatusCode::kUnauthenticated:
      return "UNAUTHENTICATED";
    case StatusCode::kPermissionDenied:
      return "PERMISSION_DENIED";
  }
  return "UNKNOWN";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(StatusCodeName(code_));
  out += ": ";
  if (!field_.empty()) out += field_ + ": ";
  out += message_;
  return out;
}

}  // namespace maestro

#include "core/cancel.h"

namespace maestro {

std::string_view CancelReasonName(CancelToken::Reason r) {
  switch (r) {
    case CancelToken::Reason::kNone:
      return "none";
    case CancelToken::Reason::kUserCancel:
      return "cancel requested";
    case CancelToken::Reason::kShutdown:
      return "worker shutting down";
    case CancelToken::Reason::kLeaseLost:
      return "lease lost";
    case CancelToken::Reason::kDeadline:
      return "deadline exceeded";
  }
  return "unknown";
}

}  // namespace maestro
