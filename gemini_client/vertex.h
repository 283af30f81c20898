// Vertex AI as a target of the one Gemini code path (the endpoint half of the endpoint/auth
// strategy; docs/generation.md, "Vertex AI"): the same generateContent wire format at
//   {base}/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent
// (or {base}/v1/publishers/google/models/{model}:generateContent with an express-mode key), where
// base is https://aiplatform.googleapis.com for the global location and
// https://{location}-aiplatform.googleapis.com for a regional one; and which models each location
// serves.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "gemini_client/models.h"
#include "imaging/generation_params.h"

namespace imgmcp::gemini {

inline constexpr char kVertexGlobalLocation[] = "global";

struct VertexTarget {
  std::string project;  // "" only in express mode
  std::string location = kVertexGlobalLocation;
  bool express = false;  // an express-mode API key: no project or location in the path
};

// https://aiplatform.googleapis.com, or https://{location}-aiplatform.googleapis.com.
std::string DefaultVertexBaseUrl(const std::string& location);

// The request path (without the base URL's own path) for `model`.
std::string VertexGeneratePath(const VertexTarget& target, const std::string& model);

// Project ids: 6-30 of [a-z0-9-] (and "domain:" prefixes); locations: [a-z0-9-]. Errors name the
// flag and what it takes.
Status ValidateVertexTarget(const VertexTarget& target);

// For a regional location: which of `table`'s models it serves and where the others are served,
// said when a call asks for one it does not offer. Empty for the global location and express mode.
std::string VertexModelsNote(const VertexTarget& target,
                             const std::vector<imaging::ModelCapabilities>& table);

// The models imgmcp offers on Vertex AI in `target.location`, from `table` (models.h) as
// OfferedGeminiModels chooses them: the 3.x image models are served only in the global location,
// gemini-2.5-flash-image in global and the regions. A default or allowed model the location does
// not serve is an error naming the location and where it is served.
Result<std::vector<imaging::ModelCapabilities>> OfferedVertexModels(
    const VertexTarget& target, const std::vector<imaging::ModelCapabilities>& table,
    const ModelChoice& choice);

}  // namespace imgmcp::gemini
