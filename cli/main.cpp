// imgmcp-cli: starts imgmcp over stdio, makes one tools/call, prints the text and saves the image.
// Exit status: 0 success, 1 the tool reported isError, 2 usage/start/protocol error or timeout.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
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

// Sends request `id` and waits for its response.
Result<Json> Request(ServerProcess& server, int id, const std::string& method, Json params,
                     ServerProcess::Deadline deadline, bool quiet) {
  const Json request = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
  RETURN_IF_ERROR(server.WriteLine(request.dump()));
  return AwaitResponse(server, id, deadline, quiet);
}

// Starts the server and initializes it; nullptr after telling why (exit status in `failed`).
std::unique_ptr<ServerProcess> StartServer(const CliOptions& o, ServerProcess::Deadline deadline,
                                           int* failed) {
  auto started = ServerProcess::Start(o.server.value_or(DefaultServer()), ServerArgs(o));
  if (!started.ok()) {
    *failed = Complain(started.error().message);
    return nullptr;
  }
  const Json init = {{"protocolVersion", kProtocolVersion},
                     {"capabilities", Json::object()},
                     {"clientInfo", {{"name", "imgmcp-cli"}, {"version", IMGMCP_VERSION}}}};
  auto reply = Request(**started, 1, "initialize", init, deadline, o.quiet);
  if (!reply.ok()) {
    *failed = Complain(WithContext(reply.error(), "initialize").message);
    return nullptr;
  }
  if (reply->contains("error")) {
    *failed = Complain("initialize failed: " + (*reply)["error"].dump());
    return nullptr;
  }
  const Json initialized = {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}};
  if (auto s = (*started)->WriteLine(initialized.dump()); !s.ok()) {
    *failed = Complain(s.error().message);
    return nullptr;
  }
  return std::move(*started);
}

// Writes the result's image block (at most one) where --out or the default name says.
int WriteImage(const CliOptions& o, const Json& result) {
  for (const auto& block : result.value("content", Json::array())) {
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
  return kExitOk;
}

// Prints a tools/call response (or a task's result) and writes its image.
int PrintReply(const CliOptions& o, const std::string& what, const Json& reply) {
  if (reply.contains("error")) {
    const Json& e = reply["error"];
    return Complain(what + ": " + e.value("message", e.dump()) + " (JSON-RPC error " +
                    e.value("code", Json(0)).dump() + ")");
  }
  const Json& result = reply.value("result", Json::object());
  const bool is_error = result.value("isError", false);
  if (o.json) {
    std::cout << result.dump(2) << "\n";  // stdout-ok: the CLI's own output, not an MCP stream
  } else {
    std::ostream& text_out =
        is_error ? std::cerr : std::cout;  // stdout-ok: the CLI's own output, not an MCP stream
    for (const auto& block : result.value("content", Json::array())) {
      if (block.value("type", "") == "text") text_out << block.value("text", "") << "\n";
    }
  }
  std::cout.flush();  // stdout-ok: the CLI's own output, not an MCP stream
  if (is_error) return kExitToolError;
  return o.no_out ? kExitOk : WriteImage(o, result);
}

// The task a task-augmented call was answered with: printed (its id first), for a later
// --wait-task.
int PrintTask(const CliOptions& o, const Json& task) {
  const std::string id = task.value("taskId", "");
  if (o.json) {
    std::cout << task.dump(2) << "\n";  // stdout-ok: the CLI's own output, not an MCP stream
  } else {
    std::cout << id << "\n";  // stdout-ok: the CLI's own output, not an MCP stream
    if (!o.quiet) {
      std::cerr << "imgmcp-cli: task " << id << " is " << task.value("status", "") << ": "
                << task.value("statusMessage", "") << "\nimgmcp-cli: its result: imgmcp-cli "
                << "--wait-task " << id << " -- (the same server flags)\n";
    }
  }
  std::cout.flush();  // stdout-ok: the CLI's own output, not an MCP stream
  return kExitOk;
}

int Run(const CliOptions& o) {
  signal(SIGPIPE, SIG_IGN);  // a dying server must give EPIPE, not kill us
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeout_seconds);
  int failed = kExitUsage;
  std::unique_ptr<ServerProcess> server = StartServer(o, deadline, &failed);
  if (server == nullptr) return failed;
  std::string task_id = o.wait_task.value_or("");
  const std::string what = task_id.empty() ? o.tool : "task " + task_id;
  Result<Json> reply = Json();
  if (task_id.empty()) {
    Json params = {
        {"name", o.tool}, {"arguments", o.arguments}, {"_meta", {{"progressToken", "imgmcp-cli"}}}};
    if (o.task) params["task"] = Json::object();
    reply = Request(*server, 2, "tools/call", params, deadline, o.quiet);
    if (!reply.ok()) return Complain(WithContext(reply.error(), o.tool).message);
    const Json& task = reply->value("result", Json::object()).value("task", Json());
    if (task.is_object() && !o.wait) {
      server->Finish(std::chrono::seconds(5));
      return PrintTask(o, task);
    }
    if (task.is_object()) task_id = task.value("taskId", "");
  }
  if (!task_id.empty()) {  // tasks/result waits for the task's end, then answers its result
    reply = Request(*server, 3, "tasks/result", {{"taskId", task_id}}, deadline, o.quiet);
    if (!reply.ok()) return Complain(WithContext(reply.error(), what).message);
  }
  server->Finish(std::chrono::seconds(5));
  return PrintReply(o, what, *reply);
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
