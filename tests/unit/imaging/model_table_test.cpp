// The model table's format (imaging/model_table.h): a document read strictly, each kind of
// malformed document refused naming the document, the row and the key; and a second document
// merged over the first, adding rows and correcting them.
#include "imaging/model_table.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/json.h"

namespace imgmcp::imaging {
namespace {

constexpr char kSource[] = "--model-table /etc/models.json";

// A complete row of a model new to a table.
Json FullRow(const std::string& id) {
  Json row = Json::parse(R"({
    "status": "ga", "sizes": ["1K", "4K"], "aspect_ratios": ["1:1", "16:9", "8:1"],
    "max_reference_images": 14, "thinking": ["minimal", "medium", "high"], "search": true,
    "input_token_limit": 131072, "output_image_tokens": {"1K": 1120, "4K": 2520},
    "prices_usd_per_million_tokens": {"input_text": 0.5, "input_image": 0.5, "output_text": 3,
                                      "output_image": 60, "thoughts": 3},
    "usd_per_grounded_query": 0.014})");
  row["id"] = id;
  return row;
}

std::string Document(const std::vector<Json>& rows) { return Json{{"models", rows}}.dump(); }

std::string ErrorOf(const std::string& document, const std::vector<ModelCapabilities>& base = {}) {
  auto table = MergeModelTable(base, document, kSource);
  EXPECT_FALSE(table.ok()) << "accepted: " << document;
  return table.ok() ? std::string() : table.error().message;
}

// A document whose one row is FullRow("m") changed by `edit`.
template <typename Edit>
std::string ErrorOfRow(Edit edit) {
  Json row = FullRow("m");
  edit(row);
  return ErrorOf(Document({row}));
}

std::vector<std::string> Ids(const std::vector<ModelCapabilities>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows) out.push_back(r.id);
  return out;
}

TEST(ModelTableTest, ARowReadsIntoEveryField) {
  Json current = FullRow("new");
  current["batch_price_factor"] = 0.5;
  Json retired = FullRow("old");
  retired["status"] = "retired";
  retired["retired_on"] = "2026-10-29";
  retired["replacement"] = "new";
  retired["sizes"] = {"4K", "1K"};  // any order: kept in the vocabulary's
  retired["thinking"] = Json::array();
  auto table = ParseModelTable(Document({current, retired}), kSource);
  ASSERT_TRUE(table.ok()) << table.error().message;
  ASSERT_EQ(Ids(*table), (std::vector<std::string>{"new", "old"}));
  const ModelCapabilities& m = (*table)[0];
  EXPECT_EQ(m.status, ModelStatus::kGa);
  EXPECT_EQ(m.image_sizes, (std::vector<std::string>{"1K", "4K"}));
  EXPECT_EQ(m.aspect_ratios, (std::vector<std::string>{"1:1", "16:9", "8:1"}));
  EXPECT_EQ(m.max_input_images, 14);
  EXPECT_EQ(m.thinking, Support::kYes);
  EXPECT_EQ(m.thinking_levels, (std::vector<std::string>{"minimal", "medium", "high"}));
  EXPECT_EQ(m.search, Support::kYes);
  EXPECT_EQ(m.chain, Support::kYes);
  EXPECT_EQ(m.input_token_limit, 131'072);
  EXPECT_EQ(OutputImageTokens(m, "4K"), 2520);
  EXPECT_EQ(m.input_image_tokens, 2520);  // the most one image costs
  EXPECT_DOUBLE_EQ(m.prices.input_text, 0.5);
  EXPECT_DOUBLE_EQ(m.prices.output_image, 60);
  EXPECT_DOUBLE_EQ(m.prices.thoughts, 3);
  EXPECT_DOUBLE_EQ(m.usd_per_grounded_query, 0.014);
  EXPECT_TRUE(m.listed);
  const ModelCapabilities& old = (*table)[1];
  EXPECT_EQ(old.status, ModelStatus::kRetired);
  EXPECT_EQ(old.retired_on, "2026-10-29");
  EXPECT_EQ(old.replacement, "new");
  EXPECT_EQ(old.image_sizes, (std::vector<std::string>{"1K", "4K"}));
  EXPECT_EQ(old.thinking, Support::kNo);
}

TEST(ModelTableTest, ADocumentThatIsNotATableIsRefused) {
  EXPECT_EQ(ErrorOf("{\"models\": ["),
            std::string(kSource) + ": not valid JSON: " +
                "parse error at line 1, column 13: syntax error while parsing value - unexpected "
                "end of input; expected '[', '{', or a literal");
  EXPECT_EQ(ErrorOf("[]"),
            std::string(kSource) + ": the document must be an object {\"models\": [row, …]}");
  EXPECT_EQ(ErrorOf(R"({"models": {}})"),
            std::string(kSource) + ": the document must be an object {\"models\": [row, …]}");
  EXPECT_EQ(ErrorOf(R"({"models": [], "version": 2})"),
            std::string(kSource) +
                ": unknown key \"version\" at the top; the document holds only \"models\"");
  EXPECT_EQ(ErrorOf(R"({"models": [7]})"),
            std::string(kSource) + ": models[0]: a row must be an object, got a number");
}

TEST(ModelTableTest, EachMalformedRowNamesTheDocumentTheRowAndTheKey) {
  const std::string at = std::string(kSource) + ": models[0] (id \"m\"): key ";
  struct Case {
    std::string error;
    std::string expected;
  };
  const Case cases[] = {
      // An unknown key.
      {ErrorOfRow([](Json& r) { r["colour"] = "red"; }),
       at + "\"colour\": unknown key; a row's keys are id, status, retired_on, replacement, "
            "sizes, aspect_ratios, max_reference_images, thinking, search, input_token_limit, "
            "output_image_tokens, prices_usd_per_million_tokens, usd_per_grounded_query, "
            "batch_price_factor"},
      {ErrorOfRow([](Json& r) { r["batch_price_factor"] = 0; }),
       at + "\"batch_price_factor\": must be a number above 0 and at most 1 (0.5: a batch token "
            "costs half), got 0"},
      {ErrorOfRow([](Json& r) { r["batch_price_factor"] = 1.5; }),
       at + "\"batch_price_factor\": must be a number above 0 and at most 1 (0.5: a batch token "
            "costs half), got 1.5"},
      {ErrorOfRow([](Json& r) { r["prices_usd_per_million_tokens"]["cached"] = 1; }),
       at + "\"prices_usd_per_million_tokens\": unknown price \"cached\"; the prices are "
            "input_text, input_image, output_text, output_image, thoughts"},
      // A wrong type.
      {ErrorOfRow([](Json& r) { r["sizes"] = "1K"; }),
       at + "\"sizes\": must be an array of strings, got a string"},
      {ErrorOfRow([](Json& r) {
         r["sizes"] = {"1K", 4};
       }),
       at + "\"sizes\": must be an array of strings; it holds a number"},
      {ErrorOfRow([](Json& r) { r["search"] = "yes"; }),
       at + "\"search\": must be true or false, got a string"},
      {ErrorOfRow([](Json& r) { r["max_reference_images"] = 2.5; }),
       at + "\"max_reference_images\": must be a whole number from 1 to 14, got 2.5"},
      {ErrorOfRow([](Json& r) { r["status"] = 1; }),
       at + "\"status\": must be a string, got a number"},
      {ErrorOfRow([](Json& r) { r["output_image_tokens"] = {1120}; }),
       at + "\"output_image_tokens\": must be an object of tokens per size, e.g. {\"1K\": 1120}, "
            "got an array"},
      {ErrorOfRow([](Json& r) { r["usd_per_grounded_query"] = "0.01"; }),
       at + "\"usd_per_grounded_query\": must be a number of US dollars from 0 to 1000000, got "
            "\"0.01\""},
      // An impossible value.
      {ErrorOfRow([](Json& r) { r["status"] = "beta"; }),
       at + "\"status\": \"beta\" is not a status; the statuses are ga, preview and retired"},
      {ErrorOfRow([](Json& r) {
         r["sizes"] = {"1K", "8K"};
       }),
       at + "\"sizes\": \"8K\" is not a size; the sizes are 512, 1K, 2K, 4K"},
      {ErrorOfRow([](Json& r) { r["sizes"] = Json::array(); }),
       at + "\"sizes\": must list at least one size"},
      {ErrorOfRow([](Json& r) {
         r["aspect_ratios"] = {"1:1", "1:1"};
       }),
       at + "\"aspect_ratios\": \"1:1\" is listed twice"},
      {ErrorOfRow([](Json& r) { r["aspect_ratios"] = {"9:21"}; }),
       at + "\"aspect_ratios\": \"9:21\" is not an aspect ratio; the aspect ratios are 1:1, "
            "2:3, 3:2, 3:4, 4:3, 4:5, 5:4, 9:16, 16:9, 21:9, 1:4, 4:1, 1:8, 8:1"},
      {ErrorOfRow([](Json& r) { r["thinking"] = {"max"}; }),
       at + "\"thinking\": \"max\" is not a thinking level; the thinking levels are minimal, "
            "low, medium, high"},
      {ErrorOfRow([](Json& r) { r["max_reference_images"] = 15; }),
       at + "\"max_reference_images\": must be a whole number from 1 to 14, got 15"},
      {ErrorOfRow([](Json& r) { r["input_token_limit"] = 0; }),
       at + "\"input_token_limit\": must be a whole number from 1 to 100000000, got 0"},
      {ErrorOfRow([](Json& r) { r["output_image_tokens"]["4K"] = -1; }),
       at + "\"output_image_tokens\": \"4K\" must be a whole number from 1 to 1000000, got -1"},
      {ErrorOfRow([](Json& r) { r["output_image_tokens"].erase("4K"); }),
       at + "\"output_image_tokens\": has no entry for size 4K (the row's sizes are 1K, 4K)"},
      {ErrorOfRow([](Json& r) { r["output_image_tokens"]["2K"] = 1680; }),
       at + "\"output_image_tokens\": has an entry for size 2K, which is not among the row's "
            "sizes (1K, 4K)"},
      {ErrorOfRow([](Json& r) { r["prices_usd_per_million_tokens"]["thoughts"] = -3; }),
       at + "\"prices_usd_per_million_tokens\": \"thoughts\" must be a number of US dollars from "
            "0 to 1000000, got -3"},
      {ErrorOfRow([](Json& r) { r["prices_usd_per_million_tokens"].erase("thoughts"); }),
       at + "\"prices_usd_per_million_tokens\": lacks \"thoughts\""},
      {ErrorOfRow([](Json& r) { r["retired_on"] = "2026-02-30"; }),
       at + "\"retired_on\": \"2026-02-30\" is not a YYYY-MM-DD date"},
      {ErrorOfRow([](Json& r) { r["retired_on"] = "29 Oct 2026"; }),
       at + "\"retired_on\": \"29 Oct 2026\" is not a YYYY-MM-DD date"},
      {ErrorOfRow([](Json& r) { r["status"] = "retired"; }),
       at + "\"retired_on\": missing; a retired model needs the date it retired"},
      {ErrorOfRow([](Json& r) {
         r["status"] = "retired";
         r["retired_on"] = "2026-10-29";
       }),
       at + "\"replacement\": missing; a retired model needs the model to use instead"},
      {ErrorOfRow([](Json& r) { r["replacement"] = "m"; }),
       at + "\"replacement\": a model cannot replace itself"},
      {ErrorOfRow([](Json& r) { r["replacement"] = "gemini-9"; }),
       at + "\"replacement\": no row has the id \"gemini-9\""},
      {ErrorOfRow([](Json& r) { r["replacement"] = "../x"; }),
       at + "\"replacement\": \"../x\" is not a model id"},
      // A key a new row needs.
      {ErrorOfRow([](Json& r) { r.erase("usd_per_grounded_query"); }),
       at + "\"usd_per_grounded_query\": missing; a model new to the table needs every key but "
            "retired_on and replacement"},
  };
  for (const Case& c : cases) EXPECT_EQ(c.error, c.expected);

  const std::string row0 = std::string(kSource) + ": models[0]";
  EXPECT_EQ(ErrorOf(Document({Json{{"status", "ga"}}})),
            row0 + ": key \"id\": missing; every row names its model");
  EXPECT_EQ(
      ErrorOf(Document({FullRow("a b")})),
      row0 + ": key \"id\": \"a b\" is not a model id (1-128 of A-Z a-z 0-9 . _ -, no \"..\")");
  EXPECT_EQ(ErrorOf(Document({FullRow("m"), FullRow("m")})),
            std::string(kSource) +
                ": models[1] (id \"m\"): key \"id\": another row of this document has the id "
                "\"m\"");
}

TEST(ModelTableTest, ReplacementsLeadToAModelThatIsNotRetired) {
  Json a = FullRow("a");
  Json b = FullRow("b");
  for (Json* r : {&a, &b}) {
    (*r)["status"] = "retired";
    (*r)["retired_on"] = "2026-01-01";
  }
  a["replacement"] = "b";
  b["replacement"] = "a";
  EXPECT_EQ(ErrorOf(Document({a, b})),
            std::string(kSource) +
                ": models[0] (id \"a\"): key \"replacement\": the replacements go round in a "
                "circle: a → b → a → b → a");
  b["replacement"] = "c";
  auto table = ParseModelTable(Document({a, b, FullRow("c")}), kSource);
  ASSERT_TRUE(table.ok()) << table.error().message;
  EXPECT_EQ(CurrentReplacement(*table, "a"), "c");
  EXPECT_EQ(CurrentReplacement(*table, "b"), "c");
  EXPECT_EQ(CurrentReplacement(*table, "c"), "");
  EXPECT_EQ(CurrentReplacement(*table, "nope"), "");
}

TEST(ModelTableTest, AMergedDocumentAddsRowsAndCorrectsKnownOnes) {
  auto base = ParseModelTable(Document({FullRow("a"), FullRow("b")}), "the built-in table");
  ASSERT_TRUE(base.ok()) << base.error().message;

  // A correction gives only the keys it changes; a new row follows the table's.
  const std::string overlay = Document({Json{{"id", "b"},
                                             {"status", "preview"},
                                             {"sizes", {"1K"}},
                                             {"output_image_tokens", {{"1K", 999}}}},
                                        FullRow("c"),
                                        Json{{"id", "a"},
                                             {"status", "retired"},
                                             {"retired_on", "2026-10-29"},
                                             {"replacement", "c"}}});
  auto merged = MergeModelTable(*base, overlay, kSource);
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ(Ids(*merged), (std::vector<std::string>{"a", "b", "c"}));
  const ModelCapabilities& a = (*merged)[0];
  EXPECT_EQ(a.status, ModelStatus::kRetired);
  EXPECT_EQ(a.replacement, "c");
  EXPECT_EQ(a.thinking_levels, (*base)[0].thinking_levels);  // untouched keys stay
  const ModelCapabilities& b = (*merged)[1];
  EXPECT_EQ(b.status, ModelStatus::kPreview);
  EXPECT_EQ(b.image_sizes, std::vector<std::string>{"1K"});
  EXPECT_EQ(OutputImageTokens(b, "1K"), 999);
  EXPECT_EQ(b.input_image_tokens, 999);
  EXPECT_DOUBLE_EQ(b.prices.output_image, 60);

  // A correction is checked with the row it lands on.
  EXPECT_EQ(ErrorOf(Document({Json{{"id", "a"}, {"sizes", {"1K", "2K"}}}}), *base),
            std::string(kSource) +
                ": models[0] (id \"a\"): key \"output_image_tokens\": has no entry for size 2K "
                "(the row's sizes are 1K, 2K)");
  EXPECT_EQ(ErrorOf(Document({Json{{"id", "a"}, {"status", "retired"}}}), *base),
            std::string(kSource) +
                ": models[0] (id \"a\"): key \"retired_on\": missing; a retired model needs the "
                "date it retired");
  EXPECT_EQ(
      ErrorOf(Document({Json{{"id", "a"}, {"speed", "fast"}}}), *base)
          .rfind(std::string(kSource) + ": models[0] (id \"a\"): key \"speed\": unknown key", 0),
      0u);
  // A new row must be whole.
  EXPECT_EQ(ErrorOf(Document({Json{{"id", "z"}, {"status", "ga"}}}), *base),
            std::string(kSource) +
                ": models[0] (id \"z\"): key \"sizes\": missing; a model new to the table needs "
                "every key but retired_on and replacement");
}

TEST(ModelTableTest, TheListingShowsEachRow) {
  Json current = FullRow("new");
  current["batch_price_factor"] = 0.5;
  Json retired = FullRow("old");
  retired["status"] = "retired";
  retired["retired_on"] = "2026-10-29";
  retired["replacement"] = "new";
  retired["thinking"] = Json::array();
  auto table = ParseModelTable(Document({current, retired}), kSource);
  ASSERT_TRUE(table.ok()) << table.error().message;
  EXPECT_EQ(FormatModelTable(*table),
            "new  ga\n"
            "  sizes 1K 4K; aspect ratios 1:1 16:9 8:1\n"
            "  thinking minimal medium high; search yes; up to 14 images a request; input token "
            "limit 131072\n"
            "  output image tokens: 1K 1120 4K 2520\n"
            "  USD per million tokens: input text 0.5, input image 0.5, output text 3, output "
            "image 60, thoughts 3; USD per grounded query 0.014\n"
            "  batch delivery: tokens at 0.5 × these prices\n"
            "\n"
            "old  retired on 2026-10-29, replaced by new\n"
            "  sizes 1K 4K; aspect ratios 1:1 16:9 8:1\n"
            "  thinking none; search yes; up to 14 images a request; input token limit 131072\n"
            "  output image tokens: 1K 1120 4K 2520\n"
            "  USD per million tokens: input text 0.5, input image 0.5, output text 3, output "
            "image 60, thoughts 3; USD per grounded query 0.014\n"
            "  batch delivery: not offered\n");
}

TEST(ModelTableTest, ABatchPriceFactorIsOptionalAndCorrectable) {
  Json row = FullRow("m");
  auto table = ParseModelTable(Document({row}), kSource);
  ASSERT_TRUE(table.ok()) << table.error().message;
  EXPECT_EQ(table->front().batch_price_factor, 0);  // left out: no batch delivery
  auto merged =
      MergeModelTable(*table, R"({"models": [{"id": "m", "batch_price_factor": 0.5}]})", kSource);
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_DOUBLE_EQ(merged->front().batch_price_factor, 0.5);
}

}  // namespace
}  // namespace imgmcp::imaging
