#include "gemini_client/vertex.h"

#include <algorithm>

namespace imgmcp::gemini {
namespace {

bool IsLowerAlnumDash(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

// Known models served in every region as well as global; the rest of the table is global only.
bool ServedInRegions(const std::string& model) { return model == "gemini-2.5-flash-image"; }

}  // namespace

std::string DefaultVertexBaseUrl(const std::string& location) {
  if (location.empty() || location == kVertexGlobalLocation) {
    return "https://aiplatform.googleapis.com";
  }
  return "https://" + location + "-aiplatform.googleapis.com";
}

std::string VertexGeneratePath(const VertexTarget& target, const std::string& model) {
  if (target.express) return "/v1/publishers/google/models/" + model + ":generateContent";
  return "/v1/projects/" + target.project + "/locations/" + target.location +
         "/publishers/google/models/" + model + ":generateContent";
}

Status ValidateVertexTarget(const VertexTarget& t) {
  if (!t.express) {
    const std::string& p = t.project;
    const size_t colon = p.find(':');  // domain-scoped projects: "example.com:my-project"
    const std::string id = colon == std::string::npos ? p : p.substr(colon + 1);
    if (p.empty()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "Vertex AI needs a project: set --vertex-project or GOOGLE_CLOUD_PROJECT");
    }
    if (id.size() < 6 || id.size() > 30 || !IsLowerAlnumDash(id) || p.size() > 100 ||
        p.find_first_of("/?#% ") != std::string::npos) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "the Vertex AI project (--vertex-project / GOOGLE_CLOUD_PROJECT) must be a "
                       "project id: 6-30 lowercase letters, digits and hyphens");
    }
  }
  if (!IsLowerAlnumDash(t.location) || t.location.size() > 40) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the Vertex AI location (--vertex-location / GOOGLE_CLOUD_LOCATION) must be "
                     "global or a region such as us-central1");
  }
  return Status::Ok();
}

std::string VertexModelsNote(const VertexTarget& target,
                             const std::vector<imaging::ModelCapabilities>& table) {
  if (target.location == kVertexGlobalLocation || target.express) return {};
  std::string regional;
  for (const auto& m : table) {
    if (ServedInRegions(m.id)) regional += (regional.empty() ? "" : ", ") + m.id;
  }
  return "Vertex AI location " + target.location + " serves only " + regional +
         "; the other image models are served in the global location (--vertex-location global)";
}

Result<std::vector<imaging::ModelCapabilities>> OfferedVertexModels(
    const VertexTarget& target, const std::vector<imaging::ModelCapabilities>& table,
    const ModelChoice& choice) {
  const bool global = target.location == kVertexGlobalLocation || target.express;
  ModelChoice regional = choice;
  if (!global && regional.allow_list.empty()) {
    regional.allow_list.push_back(choice.default_model);
    for (const auto& m : table) {
      if (ServedInRegions(m.id) &&
          (choice.allow_retired || m.status != imaging::ModelStatus::kRetired)) {
        regional.allow_list.push_back(m.id);
      }
    }
  }
  ASSIGN_OR_RETURN(std::vector<imaging::ModelCapabilities> models,
                   OfferedGeminiModels(table, regional));
  if (global) return models;
  for (const imaging::ModelCapabilities& m : models) {
    if (m.listed && !ServedInRegions(m.id)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "model " + m.id + " is not offered by Vertex AI in location " +
                           target.location +
                           "; it is served only in the global location (--vertex-location "
                           "global). In " +
                           target.location + " imgmcp offers gemini-2.5-flash-image.");
    }
  }
  return models;
}

}  // namespace imgmcp::gemini
