// What a task row keeps of its call (docs/design.md §3 "Tasks"): never image bytes. A task's
// request is kept with every base64 `data` string replaced by a note of its size, and its result
// with each image block's bytes left out: the block is rebuilt from the committed version (the
// preview or the full image, as the call's `inline` asked) when the task is read. So a row stays
// a few kilobytes whatever the images, and a reset or retention that removes the version leaves
// no copy of it in the tasks table.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "common/json.h"
#include "common/result.h"
#include "server/tools/tool_results.h"

namespace imgmcp::tools {

// The arguments of a tools/call as a task row keeps them: every string under a key "data" longer
// than kKeptDataBytes becomes "[N bytes of base64, not kept]".
inline constexpr size_t kKeptDataBytes = 256;
Json RequestForTaskRow(const Json& arguments);

// A CallToolResult as a task row keeps it: each image content block loses its "data" and gets
// the marker kRebuiltImageKey instead.
inline constexpr char kRebuiltImageKey[] = "imgmcp_rebuilt_from_version";
Json ResultForTaskRow(Json result);

// Builds the image block of a stored result again: the version (session, number) and the `inline`
// mode the call asked for; an error when the version is gone.
using ImageBlockSource =
    std::function<Result<Json>(const std::string& session_id, int64_t version, InlineMode mode)>;

// The stored result with its image blocks rebuilt from the version its structuredContent names
// (`request_json` gives the call's `inline`). A block that cannot be rebuilt (the version was
// cleared or pruned since) becomes a text block saying so.
Json ResultFromTaskRow(Json stored, const std::string& request_json,
                       const ImageBlockSource& images);

}  // namespace imgmcp::tools
