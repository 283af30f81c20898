#include "server/mcp/json_rpc.h"

#include <utility>

namespace imgmcp::mcp {

namespace {
Json Envelope() {
  Json msg = Json::object();
  msg["jsonrpc"] = "2.0";
  return msg;
}
}  // namespace

Json MakeResult(const Json& id, Json result) {
  Json msg = Envelope();
  msg["id"] = id;
  msg["result"] = std::move(result);
  return msg;
}

Json MakeErrorResponse(const Json& id, const RpcError& error) {
  Json err = Json::object();
  err["code"] = error.code;
  err["message"] = error.message;
  if (error.data) err["data"] = *error.data;
  Json msg = Envelope();
  msg["id"] = id;
  msg["error"] = std::move(err);
  return msg;
}

Json MakeNotification(std::string_view method, Json params) {
  Json msg = Envelope();
  msg["method"] = method;
  msg["params"] = std::move(params);
  return msg;
}

Json MakeRequest(const Json& id, std::string_view method, Json params) {
  Json msg = Envelope();
  msg["id"] = id;
  msg["method"] = method;
  msg["params"] = std::move(params);
  return msg;
}

bool IsValidId(const Json& id) {
  return id.is_string() || id.is_number_integer();  // number_integer covers unsigned too
}

std::string IdKey(const Json& id) { return id.dump(); }

RpcError ToRpcError(const Error& error) {
  switch (error.code) {
    case ErrorCode::kInvalidArgument:
      return {rpc_error::kInvalidParams, error.message, std::nullopt};
    case ErrorCode::kNotFound:
      return {rpc_error::kResourceNotFound, error.message, std::nullopt};
    default:
      return {rpc_error::kInternalError, error.message, std::nullopt};
  }
}

}  // namespace imgmcp::mcp
