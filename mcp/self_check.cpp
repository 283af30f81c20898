#include "mcp/self_check.h"

#include <chrono>
#include <memory>

#include "mcp/connection.h"
#include "mcp/json_rpc.h"
#include "mcp/memory_sink.h"
#include "mcp/protocol_version.h"
#include "mcp/server.h"

namespace imgmcp::mcp {

namespace {

constexpr std::chrono::milliseconds kTimeout{10000};

class Checker {
 public:
  explicit Checker(McpServer& server) : connection_(server.Connect(sink_)) {}
  ~Checker() { connection_->Close(); }

  Result<Json> Call(const std::string& method, Json params) {
    const Json id = next_id_++;
    connection_->HandleJson(MakeRequest(id, method, std::move(params)));
    auto response = sink_.WaitForResponse(id, kTimeout);
    if (!response) return MakeError(ErrorCode::kDeadlineExceeded, method + ": no answer");
    return *response;
  }

  Result<Json> CallOk(const std::string& method, Json params) {
    ASSIGN_OR_RETURN(Json response, Call(method, std::move(params)));
    if (!response.contains("result")) {
      return MakeError(ErrorCode::kInternal, method + " failed: " + response.dump());
    }
    return response["result"];
  }

  Connection& connection() { return *connection_; }

 private:
  MemorySink sink_;
  std::shared_ptr<Connection> connection_;
  int next_id_ = 1;
};

Error Fail(const std::string& what) { return MakeError(ErrorCode::kInternal, what); }

// Before initialize a modern-only method is "method not found", and the server stays up.
Status CheckProbeBeforeInitialize(Checker& check) {
  ASSIGN_OR_RETURN(Json probe, check.Call("server/discover", Json::object()));
  if (!probe.contains("error") || probe["error"]["code"] != rpc_error::kMethodNotFound) {
    return Fail("server/discover before initialize should be -32601, got " + probe.dump());
  }
  return Status::Ok();
}

Status Initialize(Checker& check) {
  Json params = {{"protocolVersion", std::string(kLatestProtocolVersion)},
                 {"capabilities", Json::object()},
                 {"clientInfo", {{"name", "imgmcp-self-check"}, {"version", "0"}}}};
  ASSIGN_OR_RETURN(Json init, check.CallOk("initialize", params));
  if (init["protocolVersion"] != kLatestProtocolVersion) {
    return Fail("initialize negotiated " + init["protocolVersion"].dump());
  }
  check.connection().HandleJson(MakeNotification("notifications/initialized", Json::object()));
  return Status::Ok();
}

bool IsWellFormedTool(const Json& tool) {
  return tool.is_object() && tool.contains("name") && tool["name"].is_string() &&
         tool.contains("description") && tool["description"].is_string() &&
         tool.contains("inputSchema") && tool["inputSchema"].is_object() &&
         tool["inputSchema"].contains("type") && tool["inputSchema"]["type"] == "object";
}

// Every page of tools/list; the number of tools, each checked.
Result<size_t> CountTools(Checker& check) {
  size_t count = 0;
  Json cursor = nullptr;
  do {
    Json params = Json::object();
    if (!cursor.is_null()) params["cursor"] = cursor;
    ASSIGN_OR_RETURN(Json page, check.CallOk("tools/list", params));
    for (const Json& tool : page["tools"]) {
      if (!IsWellFormedTool(tool)) return Fail("malformed tool in tools/list: " + tool.dump());
      ++count;
    }
    cursor = page.value("nextCursor", Json());
  } while (!cursor.is_null());
  return count;
}

}  // namespace

Result<std::string> RunSelfCheck(McpServer& server) {
  Checker check(server);
  RETURN_IF_ERROR(CheckProbeBeforeInitialize(check));
  RETURN_IF_ERROR(Initialize(check));
  RETURN_IF_ERROR(check.CallOk("ping", Json::object()));
  ASSIGN_OR_RETURN(const size_t tool_count, CountTools(check));
  ASSIGN_OR_RETURN(Json resources, check.CallOk("resources/list", Json::object()));
  ASSIGN_OR_RETURN(Json templates, check.CallOk("resources/templates/list", Json::object()));
  if (server.tools().Find("test_simple_text") != nullptr) {
    ASSIGN_OR_RETURN(Json call,
                     check.CallOk("tools/call", {{"name", "test_simple_text"}, {"arguments", {}}}));
    if (call["isError"] != false) return Fail("test_simple_text failed: " + call.dump());
  }
  return "protocol " + std::string(kLatestProtocolVersion) + ", " + std::to_string(tool_count) +
         " tools, " + std::to_string(resources["resources"].size()) + " resources, " +
         std::to_string(templates["resourceTemplates"].size()) + " resource templates";
}

}  // namespace imgmcp::mcp
