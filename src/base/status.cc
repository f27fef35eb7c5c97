#include "tpusim/base/status.h"

namespace tpusim {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kOutOfRange: return "out of range";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kUnimplemented: return "unsupported";
    case StatusCode::kResourceExhausted: return "resource exhausted";
    case StatusCode::kFailedPrecondition: return "check failed";
    case StatusCode::kInternal: return "internal error";
    case StatusCode::kCancelled: return "interrupted";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

Status Status::WithContext(const std::string& context) const {
  if (ok()) return *this;
  Status s(code_, context + ": " + message_);
  s.has_location_ = has_location_;
  return s;
}

Status Status::WithLocation(const std::string& location) const {
  if (ok() || has_location_) return *this;
  Status s(code_, location + ": " + message_);
  s.has_location_ = true;
  return s;
}

int Status::ExitCode() const {
  switch (code_) {
    case StatusCode::kOk: return 0;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
    case StatusCode::kNotFound:
    case StatusCode::kResourceExhausted: return 2;
    case StatusCode::kUnimplemented: return 3;
    case StatusCode::kCancelled: return 130;  // as a shell reports SIGINT
    default: return 1;
  }
}

}  // namespace tpusim
