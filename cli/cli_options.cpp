#include "cli/cli_options.h"

#include "common/decimal.h"

namespace imgmcp::cli {
namespace {

Error UsageError(const std::string& message) {
  return Error(ErrorCode::kInvalidArgument, message + " (see imgmcp-cli --help)");
}

}  // namespace

Status AddKeyValue(const std::string& pair, Json& arguments) {
  auto eq = pair.find('=');
  if (eq == std::string::npos || eq == 0) {
    return UsageError("expected key=value, got \"" + pair + "\"");
  }
  std::string key = pair.substr(0, eq);
  std::string text = pair.substr(eq + 1);
  Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) value = text;

  Json* node = &arguments;
  size_t start = 0;
  while (true) {
    auto dot = key.find('.', start);
    std::string part =
        key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty()) return UsageError("empty name in key \"" + key + "\"");
    if (dot == std::string::npos) {
      if (node->contains(part)) return UsageError("\"" + key + "\" given twice");
      (*node)[part] = std::move(value);
      return Status::Ok();
    }
    Json& child = (*node)[part];
    if (child.is_null()) child = Json::object();
    if (!child.is_object()) {
      return UsageError("\"" + key.substr(0, dot) + "\" is already a value, not an object");
    }
    node = &child;
    start = dot + 1;
  }
}

namespace {

// What the flags and the tool mean together: a batch call is a task; --wait-task takes no tool,
// any other run needs one; --wait needs a task; --out and --no-out exclude each other.
Status CheckTogether(CliOptions& o) {
  if (o.show_help || o.show_version) return Status::Ok();
  if (o.wait_task) {
    if (!o.tool.empty()) return UsageError("--wait-task waits for a task; it takes no tool");
    return Status::Ok();
  }
  if (o.tool.empty()) return UsageError("no tool given");
  if (o.arguments.value("delivery", Json()) == "batch") o.task = true;
  if (o.wait && !o.task) return UsageError("--wait waits for a task: add --task");
  if (o.out && o.no_out) return UsageError("--out and --no-out together");
  return Status::Ok();
}

}  // namespace

Result<CliOptions> ParseCliOptions(const std::vector<std::string>& args) {
  CliOptions o;
  size_t i = 0;
  auto value = [&](const std::string& flag) -> Result<std::string> {
    if (i + 1 >= args.size()) return UsageError(flag + " needs a value");
    return args[++i];
  };
  // Flags may come anywhere before "--" (no argument key starts with "-"); the first other word
  // is the tool, the rest are key=value pairs.
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") break;
    if (a.rfind('-', 0) != 0 && !o.tool.empty()) {
      RETURN_IF_ERROR(AddKeyValue(a, o.arguments));
      continue;
    }
    if (a == "--help" || a == "-h") {
      o.show_help = true;
    } else if (a == "--version") {
      o.show_version = true;
    } else if (a == "--server" || a == "--out" || a == "--timeout" || a == "--wait-task") {
      auto v = value(a);
      if (!v.ok()) return v.error();
      if (a == "--server") {
        o.server = *v;
      } else if (a == "--wait-task") {
        o.wait_task = *v;
      } else if (a == "--out") {
        o.out = *v;
      } else {
        const std::optional<int> t = ParseDecimal<int>(*v, 1, 86400);
        if (!t) return UsageError("--timeout expects seconds from 1 to 86400, got \"" + *v + "\"");
        o.timeout_seconds = *t;
      }
    } else if (a == "--no-out") {
      o.no_out = true;
    } else if (a == "--task") {
      o.task = true;
    } else if (a == "--wait") {
      o.wait = true;
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--quiet" || a == "-q") {
      o.quiet = true;
    } else if (a.rfind('-', 0) == 0) {
      return UsageError("unknown flag " + a);
    } else {
      o.tool = a;
    }
  }
  if (i < args.size()) o.server_args.assign(args.begin() + static_cast<long>(i) + 1, args.end());
  RETURN_IF_ERROR(CheckTogether(o));
  return o;
}

std::string CliHelpText() {
  return R"(imgmcp-cli — call one imgmcp tool from a shell

Usage: imgmcp-cli [flags] TOOL [key=value ...] [-- SERVER_FLAGS ...]

Starts the imgmcp server over stdio, initializes, makes one tools/call, prints the result's text
to stdout and writes the returned image (if any) to a file, then stops the server.

  TOOL                 generate_image, edit_image, get_image or reset_session
  key=value            one tool argument. The value is parsed as JSON when it is valid JSON
                       (numbers, true/false, {"path":"a.png"}, "\"42\""), else taken as a string.
                       Dotted keys nest: image.path=in.png → {"image": {"path": "in.png"}}.
  -- SERVER_FLAGS      passed to imgmcp as they are, e.g. -- --backend local --data-dir ./data
                       (imgmcp-cli adds --log-level warning unless a --log-level is given)

Flags:
  --server PATH        the imgmcp binary (default: imgmcp next to imgmcp-cli, else from PATH)
  --out FILE           where to write the returned image (default: <session>-v<N>.<ext> in the
                       current directory, or <session>-v<N>-preview.<ext> when the server sent
                       a preview rather than the full image; pass inline=full for full bytes)
  --no-out             never write an image file
  --json               print the whole tools/call result as JSON instead of its text
  --timeout SECONDS    give up (exit 2) after this long (default 600)
  --task               make the call as a task: print its id and stop (the call goes on in the
                       session store; delivery=batch calls are always tasks)
  --wait               with --task: wait for the task's result, then print it as a direct call's
  --wait-task ID       no TOOL: wait for the result of task ID, made by an earlier imgmcp-cli on
                       the same data directory (give the same SERVER_FLAGS)
  -q, --quiet          no progress or "wrote FILE" lines on stderr
  --version, --help

Exit status: 0 success; 1 the tool reported an error (its text goes to stderr); 2 usage error,
server failed to start, protocol error or timeout.

Examples:
  imgmcp-cli generate_image prompt="a red fox in snow" session_id=fox aspect_ratio=16:9
  imgmcp-cli edit_image session_id=fox prompt="make it night" inline=full --out fox-night.png
  imgmcp-cli edit_image session_id=mine prompt="grayscale" image.path=photo.jpg
  imgmcp-cli get_image session_id=fox version=1 inline=none --json
  imgmcp-cli reset_session session_id=fox to_version=1
  imgmcp-cli generate_image prompt="solid teal" -- --backend local --data-dir /tmp/imgs
  imgmcp-cli generate_image prompt="a red fox" delivery=batch          # half price; prints the task
  imgmcp-cli --wait-task 3f9c… --timeout 86400                         # its image, once the job ends
)";
}

}  // namespace imgmcp::cli
