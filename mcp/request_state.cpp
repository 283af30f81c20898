#include "mcp/request_state.h"

#include <utility>

namespace imgmcp::mcp {

RequestStateSeal::RequestStateSeal(std::string key, std::chrono::seconds ttl, const Clock* clock)
    : seal_(std::move(key), clock), ttl_(ttl) {}

std::string RequestStateSeal::Seal(std::string_view request, std::string_view state) const {
  return seal_.Seal(request, state, ttl_);
}

Result<std::string> RequestStateSeal::Open(std::string_view request,
                                           std::string_view sealed) const {
  Result<std::string> state = seal_.Open(request, sealed);
  if (state.ok()) return state;
  switch (state.error().code) {
    case ErrorCode::kDeadlineExceeded:
      return Error(ErrorCode::kInvalidArgument, "requestState has expired; call again without it");
    case ErrorCode::kPermissionDenied:
      return Error(ErrorCode::kInvalidArgument,
                   "requestState failed verification (altered, or issued for another request)");
    default:
      return Error(ErrorCode::kInvalidArgument, "requestState is not one this server issued");
  }
}

}  // namespace imgmcp::mcp
