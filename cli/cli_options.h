// imgmcp-cli's command line: its own flags, the tool name, key=value arguments and the server's
// flags after "--". Pure parsing, no I/O, so it is easy to reason about and to test.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/result.h"

namespace imgmcp::cli {

struct CliOptions {
  std::optional<std::string> server;  // --server PATH; default: imgmcp next to imgmcp-cli
  std::optional<std::string> out;     // --out FILE; default <session>-v<N>[-preview].<ext>
  bool no_out = false;                // --no-out: never write an image file
  bool json = false;                  // --json: print the whole tools/call result as JSON
  bool quiet = false;                 // --quiet: no progress or "wrote FILE" lines on stderr
  int timeout_seconds = 600;          // --timeout SECONDS for the whole call
  // --task: make the call as a task (2025-11-25 params.task) and print its id; implied by
  // delivery=batch. --wait: then wait for the task's result. --wait-task ID (no tool): wait for
  // the result of a task made before (by an earlier imgmcp-cli on the same data directory).
  bool task = false;
  bool wait = false;
  std::optional<std::string> wait_task;
  std::string tool;
  Json arguments = Json::object();
  std::vector<std::string> server_args;  // everything after "--"
  bool show_help = false;
  bool show_version = false;
};

// Parses argv without argv[0]. Errors say what was wrong and point at --help.
Result<CliOptions> ParseCliOptions(const std::vector<std::string>& args);

// Adds one "key=value" pair to `arguments`: the value is JSON when it parses as JSON, else the
// plain string; dotted keys nest ("image.path=x.png" → {"image":{"path":"x.png"}}).
Status AddKeyValue(const std::string& pair, Json& arguments);

std::string CliHelpText();

}  // namespace imgmcp::cli
