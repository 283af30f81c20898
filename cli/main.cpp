// imgmcp-cli: starts imgmcp over stdio, makes one tools/call, prints the text and saves the image.
// Exit status: 0 success, 1 the tool reported isError, 2 usage/start/protocol error or timeout.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli_options.h"
#include "cli/server_process.h"
#include "common/base64.h"
#include "common/json.h"
#include "common/sha256.h"

namespace imgmcp::cli {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitToolError = 1;
constexpr int kExitUsage = 2;
constexpr const char* kProtocolVersion = "2025-11-25";

int Complain(const std::string& message, int code = kExitUsage) {
  std::cerr << "imgmcp-cli: " << message << "\n";
  return code;
}

// The imgmcp binary next to this one, else "imgmcp" from PATH.
std::string DefaultServer() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto sibling = self.parent_path() / "imgmcp";
    if (access(sibling.c_str(), X_OK) == 0) return sibling.string();
  }
  return "imgmcp";
}

std::vector<std::string> ServerArgs(const CliOptions& o) {
  std::vector<std::string> args;
  bool has_level = false;
  for (const auto& a : o.server_args) {
    if (a == "--log-level" || a.rfind("--log-level=", 0) == 0) has_level = true;
  }
  if (!has_level) args = {"--log-level", "warning"};
  args.insert(args.end(), o.server_args.begin(), o.server_args.end());
  return args;
}

std::string ExtensionFor(const std::string& mime) {
  if (mime == "image/png") return "png";
  if (mime == "image/jpeg") return "jpg";
  if (mime == "image/webp") return "webp";
  if (mime == "image/gif") return "gif";
  return "bin";
}

// Reads messages until the response to `id`, answering server requests with "not supported"
// and showing progress on stderr.
Result<Json> AwaitResponse(ServerProcess& server, int id, ServerProcess::Deadline deadline,
                           bool quiet) {
  while (true) {
    auto line = server.ReadLine(deadline);
    if (!line.ok()) return line.error();
    if (line->empty()) continue;
    Json msg = Json::parse(*line, nullptr, /*allow_exceptions=*/false);
    if (msg.is_discarded() || !msg.is_object()) {
      return Error(ErrorCode::kInternal,
                   "the server wrote a line that is not a JSON object: " + line->substr(0, 200));
    }
    if (msg.contains("method")) {
      if (msg.contains("id")) {
        Json reply = {
            {"jsonrpc", "2.0"},
            {"id", msg["id"]},
            {"error", {{"code", -32601}, {"message", "imgmcp-cli does not handle this"}}}};
        RETURN_IF_ERROR(server.WriteLine(reply.dump()));
      } else if (!quiet && msg["method"] == "notifications/progress") {
        const Json& p = msg.value("params", Json::object());
        std::string text = p.value("message", "");
        if (text.empty() && p.contains("progress")) text = p["progress"].dump();
        std::cerr << "imgmcp-cli: " << text << "\n";
      }
      continue;
    }
    if (msg.value("id", Json()) == Json(id)) return msg;
  }
}

Status WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) return Error(ErrorCode::kInternal, "cannot write " + path);
  return Status::Ok();
}

int Run(const CliOptions& o) {
  signal(SIGPIPE, SIG_IGN);  // a dying server must give EPIPE, not kill us
  const std::string program = o.server.value_or(DefaultServer());
  auto started = ServerProcess::Start(program, ServerArgs(o));
  if (!started.ok()) return Complain(started.error().message);
  ServerProcess& server = **started;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeout_seconds);

  Json init = {{"jsonrpc", "2.0"},
               {"id", 1},
               {"method", "initialize"},
               {"params",
                {{"protocolVersion", kProtocolVersion},
                 {"capabilities", Json::object()},
                 {"clientInfo", {{"name", "imgmcp-cli"}, {"version", IMGMCP_VERSION}}}}}};
  if (auto s = server.WriteLine(init.dump()); !s.ok()) return Complain(s.error().message);
  auto init_reply = AwaitResponse(server, 1, deadline, o.quiet);
  if (!init_reply.ok()) return Complain(WithContext(init_reply.error(), "initialize").message);
  if (init_reply->contains("error")) {
    return Complain("initialize failed: " + (*init_reply)["error"].dump());
  }
  Json initialized = {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}};
  Json call = {{"jsonrpc", "2.0"},
               {"id", 2},
               {"method", "tools/call"},
               {"params",
                {{"name", o.tool},
                 {"arguments", o.arguments},
                 {"_meta", {{"progressToken", "imgmcp-cli"}}}}}};
  if (auto s = server.WriteLine(initialized.dump()); !s.ok()) return Complain(s.error().message);
  if (auto s = server.WriteLine(call.dump()); !s.ok()) return Complain(s.error().message);
  auto reply = AwaitResponse(server, 2, deadline, o.quiet);
  if (!reply.ok()) return Complain(WithContext(reply.error(), o.tool).message);
  server.Finish(std::chrono::seconds(5));

  if (reply->contains("error")) {
    const Json& e = (*reply)["error"];
    return Complain(o.tool + ": " + e.value("message", e.dump()) + " (JSON-RPC error " +
                    e.value("code", Json(0)).dump() + ")");
  }
  const Json& result = reply->value("result", Json::object());
  const bool is_error = result.value("isError", false);
  const Json& content = result.value("content", Json::array());
  if (o.json) {
    std::cout << result.dump(2) << "\n";  // stdout-ok: the CLI's own output, not an MCP stream
  } else {
    std::ostream& text_out =
        is_error ? std::cerr : std::cout;  // stdout-ok: the CLI's own output, not an MCP stream
    for (const auto& block : content) {
      if (block.value("type", "") == "text") text_out << block.value("text", "") << "\n";
    }
  }
  std::cout.flush();  // stdout-ok: the CLI's own output, not an MCP stream
  if (is_error) return kExitToolError;

  if (!o.no_out) {
    for (const auto& block : content) {
      if (block.value("type", "") != "image") continue;
      auto bytes = Base64Decode(block.value("data", ""));
      if (!bytes.ok()) return Complain("the image block is not valid base64");
      const Json& sc = result.value("structuredContent", Json::object());
      std::string path;
      if (o.out) {
        path = *o.out;
      } else {
        bool full = Sha256Hex(*bytes) == sc.value("sha256", "");
        path = sc.value("session_id", "image") + "-v" + sc.value("version", Json(0)).dump() +
               (full ? "" : "-preview") + "." + ExtensionFor(block.value("mimeType", ""));
      }
      if (auto s = WriteFile(path, *bytes); !s.ok()) return Complain(s.error().message);
      if (!o.quiet) std::cerr << "imgmcp-cli: wrote " << path << "\n";
      break;  // imgmcp returns at most one image
    }
  }
  return kExitOk;
}

}  // namespace
}  // namespace imgmcp::cli

int main(int argc, char** argv) {
  using namespace imgmcp::cli;
  auto options = ParseCliOptions(std::vector<std::string>(argv + 1, argv + argc));
  if (!options.ok()) return Complain(options.error().message);
  if (options->show_help) {
    std::cout << CliHelpText();  // stdout-ok: the CLI's own output, not an MCP stream
    return kExitOk;
  }
  if (options->show_version) {
    std::cout << "imgmcp-cli " IMGMCP_VERSION "\n";  // stdout-ok: the CLI's own output
    return kExitOk;
  }
  return Run(*options);
}
