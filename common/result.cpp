#include "common/result.h"

namespace imgmcp {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kConflict:
      return "conflict";
    case ErrorCode::kPermissionDenied:
      return "permission_denied";
    case ErrorCode::kResourceExhausted:
      return "resource_exhausted";
    case ErrorCode::kTooLarge:
      return "too_large";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kDeadlineExceeded:
      return "deadline_exceeded";
    case ErrorCode::kCancelled:
      return "cancelled";
    case ErrorCode::kFailedPrecondition:
      return "failed_precondition";
    case ErrorCode::kDataLoss:
      return "data_loss";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "internal";
}

}  // namespace imgmcp
