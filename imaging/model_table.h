// The model table as data (docs/generation.md, "The model table"): a JSON document of rows, one
// per model, read strictly into ModelCapabilities, and a second document (an operator's
// --model-table file) merged over the first. The Gemini backend compiles its table in
// (gemini_client/models.json); this file owns the format and its rules.
//
//   {"models": [
//     {"id": "gemini-3-pro-image", "status": "ga", "sizes": ["1K", "2K", "4K"],
//      "aspect_ratios": ["1:1", "2:3", …], "max_reference_images": 14, "thinking": [],
//      "search": true, "input_token_limit": 65536,
//      "output_image_tokens": {"1K": 1120, "2K": 1120, "4K": 2000},
//      "prices_usd_per_million_tokens": {"input_text": 2, "input_image": 2, "output_text": 12,
//                                        "output_image": 120, "thoughts": 12},
//      "usd_per_grounded_query": 0.014},
//     {"id": "gemini-2.5-flash-image", "status": "retired", "retired_on": "2026-10-02",
//      "replacement": "gemini-3.1-flash-lite-image", …}]}
//
// Every key but retired_on and replacement is required in a new row; those two are required when
// the status is "retired". A row of a merged document whose id is already in the table corrects
// that row: it gives only the keys it changes. An unknown key, a wrong type or an impossible value
// (a size or ratio outside the vocabulary, a duplicate, an output_image_tokens entry missing for
// a size, a replacement that is not in the table, a date that is not one) is an error naming the
// document, the row and the key.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "imaging/generation_params.h"

namespace imgmcp::imaging {

// `document`'s rows merged over `base` (kept in order; new rows follow in the document's order).
// `source` names the document in errors, e.g. "--model-table /etc/imgmcp/models.json".
// kInvalidArgument: "<source>: models[2] (id \"x\"): key \"sizes\": …".
Result<std::vector<ModelCapabilities>> MergeModelTable(std::vector<ModelCapabilities> base,
                                                       std::string_view document,
                                                       std::string_view source);

// A document read on its own (MergeModelTable over an empty table).
Result<std::vector<ModelCapabilities>> ParseModelTable(std::string_view document,
                                                       std::string_view source);

// The model that `id` (a retired row of `table`) points to in the end: its replacement, or that
// row's replacement when it is retired too, and so on; "" when there is none.
std::string CurrentReplacement(const std::vector<ModelCapabilities>& table, std::string_view id);

// The table as `imgmcp --list-models` prints it: one block per row with its id, status, sizes,
// ratios, thinking levels, search, limits, output image tokens and prices.
std::string FormatModelTable(const std::vector<ModelCapabilities>& table);

}  // namespace imgmcp::imaging
