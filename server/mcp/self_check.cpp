#include "server/mcp/self_check.h"

#include <chrono>
#include <memory>

#include "server/mcp/connection.h"
#include "server/mcp/json_rpc.h"
#include "server/mcp/memory_sink.h"
#include "server/mcp/protocol_version.h"
#include "server/mcp/server.h"

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
    auto response = Call(method, std::move(params));
    if (!response.ok()) return response.error();
    if (!response->contains("result")) {
      return MakeError(ErrorCode::kInternal, method + " failed: " + response->dump());
    }
    return (*response)["result"];
  }

  Connection& connection() { return *connection_; }

 private:
  MemorySink sink_;
  std::shared_ptr<Connection> connection_;
  int next_id_ = 1;
};

Error Fail(const std::string& what) { return MakeError(ErrorCode::kInternal, what); }

}  // namespace

Result<std::string> RunSelfCheck(McpServer& server) {
  Checker check(server);

  auto probe = check.Call("server/discover", Json::object());
  if (!probe.ok()) return probe.error();
  if (!probe->contains("error") || (*probe)["error"]["code"] != rpc_error::kMethodNotFound) {
    return Fail("server/discover before initialize should be -32601, got " + probe->dump());
  }

  Json init_params = {{"protocolVersion", std::string(kLatestProtocolVersion)},
                      {"capabilities", Json::object()},
                      {"clientInfo", {{"name", "imgmcp-self-check"}, {"version", "0"}}}};
  auto init = check.CallOk("initialize", init_params);
  if (!init.ok()) return init.error();
  if ((*init)["protocolVersion"] != kLatestProtocolVersion) {
    return Fail("initialize negotiated " + (*init)["protocolVersion"].dump());
  }
  check.connection().HandleJson(MakeNotification("notifications/initialized", Json::object()));

  auto ping = check.CallOk("ping", Json::object());
  if (!ping.ok()) return ping.error();

  size_t tool_count = 0;
  Json cursor = nullptr;
  do {
    Json params = Json::object();
    if (!cursor.is_null()) params["cursor"] = cursor;
    auto page = check.CallOk("tools/list", params);
    if (!page.ok()) return page.error();
    for (const Json& tool : (*page)["tools"]) {
      if (!tool.is_object() || !tool.contains("name") || !tool["name"].is_string() ||
          !tool.contains("description") || !tool["description"].is_string() ||
          !tool.contains("inputSchema") || !tool["inputSchema"].is_object() ||
          !tool["inputSchema"].contains("type") || tool["inputSchema"]["type"] != "object") {
        return Fail("malformed tool in tools/list: " + tool.dump());
      }
      ++tool_count;
    }
    cursor = page->value("nextCursor", Json());
  } while (!cursor.is_null());

  auto resources = check.CallOk("resources/list", Json::object());
  if (!resources.ok()) return resources.error();
  auto templates = check.CallOk("resources/templates/list", Json::object());
  if (!templates.ok()) return templates.error();

  if (server.tools().Find("test_simple_text") != nullptr) {
    auto call = check.CallOk("tools/call", {{"name", "test_simple_text"}, {"arguments", {}}});
    if (!call.ok()) return call.error();
    if ((*call)["isError"] != false) return Fail("test_simple_text failed: " + call->dump());
  }

  return "protocol " + std::string(kLatestProtocolVersion) + ", " + std::to_string(tool_count) +
         " tools, " + std::to_string((*resources)["resources"].size()) + " resources, " +
         std::to_string((*templates)["resourceTemplates"].size()) + " resource templates";
}

}  // namespace imgmcp::mcp
