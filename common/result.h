// Result<T>: the value of an operation that can fail in an expected way, or an Error saying why.
// Exceptions are reserved for third-party edges and are caught once per layer boundary.
#pragma once

#include <string>
#include <string_view>
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
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}      // NOLINT: implicit
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

// The caller sent something malformed or out of range; `message` names the field and what is
// allowed.
inline Error InvalidArgument(std::string message) {
  return Error(ErrorCode::kInvalidArgument, std::move(message));
}

// `error` with `context` before its message — "context: message" — and its code kept: how a
// caller says which flag, field or step failed without losing the cause.
//
//   if (!opened.ok()) return WithContext(opened.error(), "--metrics");
inline Error WithContext(const Error& error, std::string_view context) {
  return Error(error.code, std::string(context) + ": " + error.message);
}

}  // namespace imgmcp

// Early return of an expected failure, the one piece of ceremony every layer repeats.
//
//   RETURN_IF_ERROR(WriteFile(path, bytes));             // a Status or any Result<T>
//   ASSIGN_OR_RETURN(Statement st, db.Prepare(sql));     // declares st, or returns the error
//   ASSIGN_OR_RETURN(existing, LoadRow(db, id));         // assigns to an existing variable
//
// The enclosing function returns a Status or a Result<U>: both are built from the Error. The
// left-hand side of ASSIGN_OR_RETURN may not contain a top-level comma (use auto or an alias).
#define IMGMCP_RESULT_CONCAT_INNER(a, b) a##b
#define IMGMCP_RESULT_CONCAT(a, b) IMGMCP_RESULT_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(...)                                    \
  do {                                                          \
    auto&& imgmcp_status_or_result_ = (__VA_ARGS__);            \
    if (!imgmcp_status_or_result_.ok()) {                       \
      return ::imgmcp::Error(imgmcp_status_or_result_.error()); \
    }                                                           \
  } while (false)

#define ASSIGN_OR_RETURN(lhs, ...) \
  IMGMCP_ASSIGN_OR_RETURN_IMPL(IMGMCP_RESULT_CONCAT(imgmcp_result_, __LINE__), lhs, __VA_ARGS__)

#define IMGMCP_ASSIGN_OR_RETURN_IMPL(result, lhs, ...)      \
  auto result = (__VA_ARGS__);                              \
  if (!result.ok()) return ::imgmcp::Error(result.error()); \
  lhs = std::move(result).value()
