// Fuzzes the MCP core (JSON-RPC parsing, lifecycle, dispatch, batches, tool calls, prompts,
// resources, completion, cancellation) through a Connection writing to an in-memory sink.
//
// Each input is one client session: an initialize (2025-03-26 when byte 0 is odd, so batches are
// allowed; else 2025-11-25), notifications/initialized, then every '\n'-separated line of the rest
// as one message. Every answer must be a well-formed JSON-RPC message that serialises, and the
// pre-parse nesting check must catch every message the parser would build too deep.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "common/json.h"
#include "common/log.h"
#include "mcp/connection.h"
#include "mcp/json_rpc.h"
#include "mcp/memory_sink.h"
#include "mcp/server.h"
#include "server/conformance/conformance_fixtures.h"

namespace {

using imgmcp::Json;
namespace mcp = imgmcp::mcp;

// A reservation that records nothing; exercises the admission path.
class NoReservation final : public mcp::CallReservation {};

mcp::McpServer* MakeServer() {
  imgmcp::log::SetMinLevel(imgmcp::log::Level::kOff);
  mcp::ServerOptions options;
  options.page_size = 3;  // small pages: cursors get exercised
  options.max_concurrent_calls = 16;
  options.client_request_timeout = std::chrono::milliseconds(5);
  auto* server = new mcp::McpServer(options);  // leaked: lives for the whole fuzzing run
  if (!imgmcp::conformance::RegisterConformanceFixtures(*server).ok()) std::abort();
  mcp::ToolDefinition echo;
  echo.name = "echo";
  echo.description = "Echoes its arguments as text and as structured content.";
  echo.input_schema = Json{{"type", "object"}};
  echo.output_schema = Json{{"type", "object"}};
  auto status = server->RegisterTool(
      echo,
      [](const Json& arguments, mcp::ToolCallContext& ctx) {
        ctx.ReportProgress(1, 2, "echoing");
        ctx.Log(mcp::LogLevel::kDebug, "echo", arguments);
        mcp::ToolResult result =
            mcp::ToolResult::Text(arguments.dump(-1, ' ', false, Json::error_handler_t::replace));
        result.structured_content = arguments;
        return result;
      },
      [](const Json& arguments, const mcp::Caller&) -> std::unique_ptr<mcp::CallReservation> {
        if (arguments.contains("reserve")) return std::make_unique<NoReservation>();
        return nullptr;
      });
  if (!status.ok()) std::abort();
  return server;
}

bool IsWellFormed(const Json& message) {
  if (message.is_array()) {  // a batch answer
    if (message.empty()) return false;
    for (const Json& m : message) {
      if (!m.is_object() || !IsWellFormed(m)) return false;
    }
    return true;
  }
  if (!message.is_object()) return false;
  auto version = message.find("jsonrpc");
  if (version == message.end() || *version != "2.0") return false;
  const bool is_result = message.contains("result");
  const bool is_error = message.contains("error");
  if (message.contains("method")) return !is_result && !is_error;  // notification or request
  if (is_result == is_error) return false;
  auto id = message.find("id");
  if (id == message.end()) return false;
  if (!id->is_null() && !mcp::IsValidId(*id)) return false;
  if (is_error) {
    const Json& error = message["error"];
    if (!error.is_object() || !error.contains("code") || !error["code"].is_number_integer() ||
        !error.contains("message") || !error["message"].is_string()) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static mcp::McpServer* server = MakeServer();
  if (size < 1) return 0;
  const std::string version = (data[0] & 1) ? "2025-03-26" : "2025-11-25";
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);

  mcp::MemorySink sink;
  std::shared_ptr<mcp::Connection> connection = server->Connect(sink);
  connection->HandleMessage(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{)"
                            R"("protocolVersion":")" +
                            version +
                            R"(","capabilities":{"sampling":{},"elicitation":{},"roots":{}},)"
                            R"("clientInfo":{"name":"fuzz","version":"0"}}})");
  connection->HandleMessage(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  int lines = 0;
  while (!rest.empty() && lines < 64) {
    const size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    // The depth scan that runs before parsing must never let a deeper value through. It may be
    // stricter than the parsed value: with a duplicate key the parser keeps only the last
    // value, so {"id":{"a":1},"id":1} nests 2 deep as text and 1 deep once parsed.
    const Json parsed = Json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_discarded()) {
      for (size_t limit : {0, 1, 2, 5, 128}) {
        if (mcp::NestsDeeperThan(parsed, limit) && !mcp::TextNestsDeeperThan(line, limit)) {
          std::abort();
        }
      }
    }
    connection->HandleMessage(line);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    ++lines;
  }
  if (!connection->WaitIdle(std::chrono::milliseconds(2000))) {
    connection->CancelAll();
    if (!connection->WaitIdle(std::chrono::seconds(10))) std::abort();  // a call ignores cancel
  }
  connection->Close();

  for (const auto& sent : sink.Messages()) {
    if (!IsWellFormed(sent.message)) std::abort();
    // What the stdio transport does with every outgoing message.
    const std::string text = sent.message.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (text.find('\n') != std::string::npos) std::abort();
  }
  return 0;
}
