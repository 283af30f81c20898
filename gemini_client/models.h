// The Gemini image models imgmcp knows and what each supports (the per-model table of docs/generation.md):
// the capability table that the tools' schemas and validation (through
// ImageBackend::Models()) and the request builder (wire_format) read.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "imaging/generation_params.h"

namespace imgmcp::gemini {

// Every known model, in the order listed to users.
const std::vector<imaging::ModelCapabilities>& KnownGeminiModels();

// The row used for a model id that is not in the table (a newer model, say): only what every
// Gemini image model takes (image_size 1K, the 10 standard ratios, no thinking level, no search),
// conversational edits allowed. `listed` is false.
imaging::ModelCapabilities UnlistedGeminiModel(std::string id);

// The rows a client offers: `default_model` first, then each id of `allow_list` (all known models
// when empty) in the order given, without duplicates. kInvalidArgument when `default_model` is
// not in a non-empty `allow_list`; ids outside the table get UnlistedGeminiModel.
Result<std::vector<imaging::ModelCapabilities>> OfferedGeminiModels(
    const std::string& default_model, const std::vector<std::string>& allow_list);

// "gemini-2.5-flash-image,gemini-3-pro-image" → its ids; blanks and empty items skipped.
std::vector<std::string> SplitModelList(std::string_view text);

}  // namespace imgmcp::gemini
