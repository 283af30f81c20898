// Result<T>: the value of an operation that can fail in an expected way, or an Error saying why.
// Exceptions are reserved for third-party edges and are caught once per layer boundary.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace imgmcp {

// Broad classes of failure. Transports and tools map these to wire-level errors.
enum class ErrorCode {
  kInvalidArgument,     // the caller sent something malformed or out of range
  kNotFound,            // session, version, file or resource does not exist
  kConflict,            // expected_version did not match, or a similar precondition on state
  kPermissionDenied,    // path outside allowed roots, bad credentials
  kResourceExhausted,   // quota, rate limit, size limit
  kTooLarge,            // input over a configured byte or pixel limit
  kUnsupported,         // format or feature this build does not handle
  kUnavailable,         // backend temporarily unreachable; retrying may help
  kDeadlineExceeded,    // timed out
  kCancelled,           // the client cancelled the request
  kFailedPrecondition,  // refused by policy (e.g. a safety block) or wrong state of the system
  kDataLoss,            // stored data is corrupt or missing
  kInternal,            // a bug or an unexpected system failure
};

const char* ErrorCodeName(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;

  Error() = default;
  Error(ErrorCode c, std::string m) : code(c), message(std::move(m)) {}
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

// Result without a value: success, or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit
  static Status Ok() { return Status(); }

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

inline Error MakeError(ErrorCode code, std::string message) {
  return Error(code, std::move(message));
}

}  // namespace imgmcp
