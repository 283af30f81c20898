// Which turns a `context: "chain"` edit replays, and what each version keeps for it.
#include "server/tools/chain_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "server/tools/version_details.h"

namespace imgmcp::tools {
namespace {

using session::VersionInfo;

constexpr char kFlash[] = "gemini-3.1-flash-image";

imaging::ModelCapabilities Flash() {
  imaging::ModelCapabilities m;
  m.id = kFlash;
  m.image_sizes = imaging::ImageSizeNames();
  m.aspect_ratios = imaging::AspectRatioNames();
  m.chain = imaging::Support::kYes;
  m.max_input_images = 14;
  m.input_token_limit = 131'072;
  m.input_image_tokens = 1120;
  return m;
}

// A session's versions by number, as the store would return them.
class Session {
 public:
  // A version a backend call made; `user_image`: its instruction went with the parent's image.
  void Made(int64_t n, std::optional<int64_t> parent, bool user_image,
            const std::string& model = kFlash, const std::string& backend = "gemini") {
    VersionInfo v = Base(n, parent, parent ? "edit" : "generate");
    v.model = model;
    v.backend = backend;
    imaging::BackendImage answer;
    answer.replay = R"({"parts":[{"inlineData":{"mimeType":"image/png"}}],"image":0})";
    imaging::GenerationOptions o;
    v.details =
        MakeVersionDetails(ParamsJson(o, model), answer, TurnRecord{user_image, answer.replay});
    versions_[n] = v;
  }
  void Import(int64_t n) { versions_[n] = Base(n, std::nullopt, "import"); }
  void Revert(int64_t n, int64_t to) {
    VersionInfo v = Base(n, to, "revert");
    v.model = versions_.at(to).model;
    v.backend = versions_.at(to).backend;
    versions_[n] = v;
  }
  void Drop(int64_t n) { versions_.erase(n); }
  void Forget(int64_t n) { versions_.at(n).details = "{}"; }
  const VersionInfo& at(int64_t n) const { return versions_.at(n); }

  VersionLookup Lookup() const {
    return [this](int64_t n) -> Result<VersionInfo> {
      auto it = versions_.find(n);
      if (it == versions_.end()) return Error(ErrorCode::kNotFound, "gone");
      return it->second;
    };
  }

 private:
  static VersionInfo Base(int64_t n, std::optional<int64_t> parent, const std::string& op) {
    VersionInfo v;
    v.session_id = "s";
    v.version = n;
    v.parent = parent;
    v.operation = op;
    v.prompt = "prompt " + std::to_string(n);
    v.sha256 = "sha-" + std::to_string(n);
    return v;
  }
  std::map<int64_t, VersionInfo> versions_;
};

struct Planned {
  std::vector<int64_t> versions;
  std::vector<std::optional<int64_t>> user_images;
  std::string stopped;
};

Planned Plan(const Session& s, int64_t base, int max_turns = 4,
             imaging::ModelCapabilities model = Flash(), int references = 0,
             size_t prompt_bytes = 10) {
  ChainLimits limits;
  limits.max_turns = max_turns;
  limits.model = &model;
  limits.backend = "gemini";
  limits.reference_images = references;
  limits.prompt_bytes = prompt_bytes;
  auto plan = PlanChain(s.at(base), limits, s.Lookup());
  EXPECT_TRUE(plan.ok()) << plan.error().message;
  Planned out;
  if (!plan.ok()) return out;
  for (const PlannedTurn& t : plan->turns) {
    out.versions.push_back(t.version.version);
    out.user_images.push_back(t.user_image ? std::optional<int64_t>(t.user_image->version)
                                           : std::nullopt);
    EXPECT_FALSE(t.record.replay.empty());
  }
  out.stopped = plan->stopped;
  return out;
}

using V = std::vector<int64_t>;

// generate v1, edit v2 (image context: sent with v1's image), chain edits v3 and v4.
Session FourTurns() {
  Session s;
  s.Made(1, std::nullopt, false);
  s.Made(2, 1, true);
  s.Made(3, 2, false);
  s.Made(4, 3, false);
  return s;
}

TEST(ChainPlanTest, ReplaysTheTurnsThatLedToTheBaseOldestFirst) {
  Session s = FourTurns();
  Planned p = Plan(s, 4);
  EXPECT_EQ(p.versions, (V{1, 2, 3, 4}));
  EXPECT_EQ(p.user_images,
            (std::vector<std::optional<int64_t>>{std::nullopt, 1, std::nullopt, std::nullopt}));
  EXPECT_EQ(p.stopped, "version 1 starts the session");
}

TEST(ChainPlanTest, KeepsTheNewestTurnsUpToChainTurns) {
  Session s = FourTurns();
  Planned p = Plan(s, 4, /*max_turns=*/2);
  EXPECT_EQ(p.versions, (V{3, 4}));
  EXPECT_EQ(p.stopped, "the server's --chain-turns 2");
}

TEST(ChainPlanTest, AForkReplaysOnlyItsOwnAncestors) {
  Session s = FourTurns();
  EXPECT_EQ(Plan(s, 2).versions, (V{1, 2}));  // from_version 2: v3 and v4 are not on its path
  s.Made(5, 2, false);                        // a chain edit from version 2
  EXPECT_EQ(Plan(s, 5).versions, (V{1, 2, 5}));
}

TEST(ChainPlanTest, ARevertIsPassedThroughToTheVersionItCopies) {
  Session s = FourTurns();
  s.Revert(5, 2);
  Planned p = Plan(s, 5);
  EXPECT_EQ(p.versions, (V{1, 2}));
  s.Made(6, 5, false);  // a chain edit after the revert
  EXPECT_EQ(Plan(s, 6).versions, (V{1, 2, 6}));
}

TEST(ChainPlanTest, AnImportStartsTheChain) {
  Session s;
  s.Import(1);
  s.Made(2, 1, true);  // edited with the imported image
  s.Made(3, 2, false);
  Planned p = Plan(s, 3);
  EXPECT_EQ(p.versions, (V{2, 3}));
  EXPECT_EQ(p.user_images[0], 1);
  EXPECT_EQ(p.stopped, "version 1 is an imported image");
  EXPECT_TRUE(Plan(s, 1).versions.empty());
}

TEST(ChainPlanTest, AnotherModelOrBackendEndsIt) {
  Session s;
  s.Made(1, std::nullopt, false, "gemini-3-pro-image");
  s.Made(2, 1, true);
  Planned p = Plan(s, 2);
  EXPECT_EQ(p.versions, (V{2}));
  EXPECT_NE(p.stopped.find("version 1 was made by gemini-3-pro-image"), std::string::npos);

  Session local;
  local.Made(1, std::nullopt, false, "imgmcp-local-1", "local");
  local.Made(2, 1, true);
  p = Plan(local, 2);
  EXPECT_EQ(p.versions, (V{2}));
  EXPECT_NE(p.stopped.find("made by the local backend"), std::string::npos) << p.stopped;
}

TEST(ChainPlanTest, AVersionWithoutReplayDataEndsIt) {
  Session s = FourTurns();
  s.Forget(2);  // e.g. a row written before versions kept details
  Planned p = Plan(s, 4);
  EXPECT_EQ(p.versions, (V{3, 4}));
  EXPECT_NE(p.stopped.find("version 2 has no answer to replay"), std::string::npos) << p.stopped;
}

TEST(ChainPlanTest, GoneVersionsEndItAndATurnWithoutItsSentImageIsLeftOut) {
  Session s = FourTurns();
  s.Drop(2);  // pruned
  Planned p = Plan(s, 4);
  EXPECT_EQ(p.versions, (V{3, 4}));
  EXPECT_NE(p.stopped.find("version 2 before version 3 no longer exists"), std::string::npos)
      << p.stopped;

  Session t = FourTurns();
  t.Drop(1);  // version 2's instruction went with version 1's image, which is gone
  p = Plan(t, 4);
  EXPECT_EQ(p.versions, (V{3, 4}));
  EXPECT_NE(p.stopped.find("version 1 whose image went with version 2's instruction"),
            std::string::npos)
      << p.stopped;
}

TEST(ChainPlanTest, TheModelsInputImagesBoundTheWindow) {
  Session s = FourTurns();
  imaging::ModelCapabilities few = Flash();
  few.max_input_images = 3;
  // One reference leaves two images: versions 3 and 4 (one image each).
  Planned p = Plan(s, 4, 4, few, /*references=*/1);
  EXPECT_EQ(p.versions, (V{3, 4}));
  EXPECT_EQ(p.stopped, "model gemini-3.1-flash-image takes at most 3 input images");
  // No references: v2 costs two images (its answer and the image sent with it): 1 + 1 + 2 > 3.
  EXPECT_EQ(Plan(s, 4, 4, few).versions, (V{3, 4}));
}

TEST(ChainPlanTest, TheModelsInputTokenLimitBoundsTheWindow) {
  Session s = FourTurns();
  imaging::ModelCapabilities small = Flash();
  const int64_t one_image_turn =
      EstimatedTurnTokens(PlannedTurn{s.at(4), *TurnOf(s.at(4).details), std::nullopt}, small);
  const int64_t fixed = 1024 + 10 / 4;  // the reserve and the new prompt
  // Versions 4 and 3 fit; version 2 (two images) does not.
  small.input_token_limit = fixed + 2 * one_image_turn + 500;
  Planned p = Plan(s, 4, 4, small);
  EXPECT_EQ(p.versions, (V{3, 4}));
  EXPECT_EQ(p.stopped, "model gemini-3.1-flash-image's input limit of " +
                           std::to_string(small.input_token_limit) + " tokens");
  small.input_token_limit = fixed + 5 * one_image_turn + 2 * 1120;  // room for all four
  EXPECT_EQ(Plan(s, 4, 4, small).versions, (V{1, 2, 3, 4}));
  small.input_token_limit = 0;  // not limited
  EXPECT_EQ(Plan(s, 4, 4, small).versions, (V{1, 2, 3, 4}));
}

TEST(ChainPlanTest, LookupFailuresOtherThanNotFoundAreErrors) {
  Session s = FourTurns();
  ChainLimits limits;
  imaging::ModelCapabilities model = Flash();
  limits.model = &model;
  limits.backend = "gemini";
  auto plan = PlanChain(s.at(4), limits, [](int64_t) -> Result<VersionInfo> {
    return Error(ErrorCode::kDataLoss, "database is damaged");
  });
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().code, ErrorCode::kDataLoss);
}

TEST(VersionDetailsTest, RoundTripAndOlderRows) {
  imaging::BackendImage answer;
  answer.text = "Here it is.";
  answer.finish_reason = "STOP";
  answer.usage = {{"promptTokenCount", 10}, {"candidatesTokenCount", 1120}};
  answer.sources = {{"example.org", "https://example.org/a"}};
  answer.replay = R"({"parts":[],"image":0})";
  imaging::GenerationOptions o;
  o.image_size = "2K";
  o.thinking = "high";
  o.search = true;
  const Json params = ParamsJson(o, kFlash);
  EXPECT_EQ(
      params,
      Json({{"model", kFlash}, {"image_size", "2K"}, {"thinking", "high"}, {"search", true}}));
  const std::string details = MakeVersionDetails(params, answer, TurnRecord{true, answer.replay});
  EXPECT_EQ(ParamsOf(details), params);
  auto turn = TurnOf(details);
  ASSERT_TRUE(turn.has_value());
  EXPECT_TRUE(turn->user_image);
  EXPECT_EQ(turn->replay, answer.replay);
  const Json d = Json::parse(details);
  EXPECT_EQ(d["model_text"], "Here it is.");
  EXPECT_EQ(d["usage"], answer.usage);
  EXPECT_EQ(d["sources"][0]["uri"], "https://example.org/a");

  answer.replay.clear();  // the local engine: nothing to replay
  EXPECT_FALSE(TurnOf(MakeVersionDetails(params, answer, TurnRecord{})).has_value());
  for (const char* old : {"{}", "", "not json", "[1]", R"({"turn":{"replay":5}})"}) {
    EXPECT_TRUE(ParamsOf(old).empty()) << old;
    EXPECT_FALSE(TurnOf(old).has_value()) << old;
  }
  // Only the top-level params count, wherever they stand among the other keys.
  EXPECT_EQ(ParamsOf(R"({"turn":{"params":{"model":"no"}},"cost":{"usd":1},)"
                     R"("params":{"model":"m","replayed_versions":[1,2]},"usage":[{"a":[]}]})"),
            Json({{"model", "m"}, {"replayed_versions", {1, 2}}}));
  EXPECT_TRUE(ParamsOf(R"({"turn":{"params":{"model":"no"}}})").empty());
  EXPECT_TRUE(ParamsOf(R"({"params":"not an object"})").empty());
}

TEST(VersionDetailsTest, AnswerFieldsAndLines) {
  imaging::BackendImage answer;
  answer.text = std::string(400, 'x') + "\nsecond line";
  answer.usage = {{"promptTokenCount", 578},
                  {"candidatesTokenCount", 1132},
                  {"thoughtsTokenCount", 147},
                  {"totalTokenCount", 1857}};
  answer.finish_reason = "STOP";
  Json fields = AnswerFields(answer, /*search=*/true);
  EXPECT_EQ(fields["model_text"], answer.text);
  EXPECT_EQ(fields["usage"], answer.usage);
  EXPECT_EQ(fields["finish_reason"], "STOP");
  EXPECT_EQ(fields["sources"], Json::array());  // asked for, none reported
  EXPECT_FALSE(AnswerFields(answer, false).contains("sources"));
  const std::string lines = AnswerLines(answer, true);
  EXPECT_NE(lines.find("\nUsage: prompt 578, output 1132, thinking 147, total 1857 tokens"),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("\nFinish reason: STOP"), std::string::npos);
  EXPECT_NE(lines.find("\nSources: none reported"), std::string::npos);
  const size_t text_line = lines.find("\nModel text: \"");
  ASSERT_NE(text_line, std::string::npos);
  EXPECT_LT(lines.find('\n', text_line + 1) - text_line, 320u);  // one short line
  EXPECT_EQ(AnswerLines(imaging::BackendImage{}, false), "");
}

}  // namespace
}  // namespace imgmcp::tools
