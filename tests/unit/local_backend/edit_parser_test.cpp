#include "local_backend/edit_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace imgmcp::local {
namespace {

std::vector<local::EditClause> Parse(const std::string& prompt) {
  Result<std::vector<EditClause>> r = local::ParseEditInstructions(prompt);
  EXPECT_TRUE(r.ok()) << prompt << ": " << r.error().message;
  return r.ok() ? r.value() : std::vector<local::EditClause>{};
}

TEST(EditParserTest, SplitsOnCommaSemicolonThenAnd) {
  auto c = Parse("Grayscale, invert; rotate 90 then flip vertical and blur");
  ASSERT_EQ(c.size(), 5u);
  EXPECT_TRUE(std::holds_alternative<local::GrayscaleOp>(c[0].op));
  EXPECT_TRUE(std::holds_alternative<local::InvertOp>(c[1].op));
  EXPECT_EQ(std::get<local::RotateOp>(c[2].op).degrees, 90);
  EXPECT_FALSE(std::get<local::FlipOp>(c[3].op).horizontal);
  EXPECT_EQ(std::get<local::BlurOp>(c[4].op).radius, 2);
  EXPECT_EQ(c[2].source, "rotate 90");
}

TEST(EditParserTest, CommasInsideCoordinatesDoNotSplit) {
  auto c = Parse("crop 10, 20, 30, 40, then draw red circle at 5,6 size 7, invert.");
  ASSERT_EQ(c.size(), 3u);
  const local::CropOp crop = std::get<local::CropOp>(c[0].op);
  EXPECT_EQ(crop.x, 10);
  EXPECT_EQ(crop.y, 20);
  EXPECT_EQ(crop.width, 30);
  EXPECT_EQ(crop.height, 40);
  const local::DrawOp draw = std::get<local::DrawOp>(c[1].op);
  EXPECT_EQ(draw.shape, local::DrawShape::kCircle);
  EXPECT_EQ(draw.color, (local::Rgb{255, 0, 0}));
  EXPECT_EQ(draw.x, 5);
  EXPECT_EQ(draw.y, 6);
  EXPECT_EQ(draw.size, 7);
  EXPECT_TRUE(std::holds_alternative<local::InvertOp>(c[2].op));
}

TEST(EditParserTest, ArgumentsAndDefaults) {
  auto c = Parse(
      "brightness +20%; contrast -15 %; tint orange; tint #102030 55%; border navy; border "
      "white 4px; resize 512x384; resize 300×200; resize 50%; blur 5; draw dot blue at 1,2; "
      "draw a square green at 3,4; rotate 90 counterclockwise; rotate left; darken 10%; mirror");
  ASSERT_EQ(c.size(), 16u);
  EXPECT_EQ(std::get<local::BrightnessOp>(c[0].op).percent, 20);
  EXPECT_EQ(std::get<local::ContrastOp>(c[1].op).percent, -15);
  EXPECT_EQ(std::get<local::TintOp>(c[2].op).strength, 30);
  EXPECT_EQ(std::get<local::TintOp>(c[3].op).color, (local::Rgb{0x10, 0x20, 0x30}));
  EXPECT_EQ(std::get<local::TintOp>(c[3].op).strength, 55);
  EXPECT_EQ(std::get<local::BorderOp>(c[4].op).width, 10);
  EXPECT_EQ(std::get<local::BorderOp>(c[5].op).width, 4);
  EXPECT_EQ(std::get<local::ResizeOp>(c[6].op).width, 512);
  EXPECT_EQ(std::get<local::ResizeOp>(c[6].op).height, 384);
  EXPECT_EQ(std::get<local::ResizeOp>(c[7].op).width, 300);
  EXPECT_EQ(std::get<local::ResizeOp>(c[8].op).percent, 50);
  EXPECT_EQ(std::get<local::BlurOp>(c[9].op).radius, 5);
  EXPECT_EQ(std::get<local::DrawOp>(c[10].op).size, 8);
  EXPECT_EQ(std::get<local::DrawOp>(c[11].op).size, 32);
  EXPECT_EQ(std::get<local::DrawOp>(c[11].op).shape, local::DrawShape::kSquare);
  EXPECT_EQ(std::get<local::RotateOp>(c[12].op).degrees, 270);
  EXPECT_EQ(std::get<local::RotateOp>(c[13].op).degrees, 270);
  EXPECT_EQ(std::get<local::BrightnessOp>(c[14].op).percent, -10);
  EXPECT_TRUE(std::get<local::FlipOp>(c[15].op).horizontal);
}

TEST(EditParserTest, TextKeepsQuotedWordsVerbatim) {
  auto c = Parse("text \"Hello, World and Then\" at 4,5 white size 3, invert");
  ASSERT_EQ(c.size(), 2u);
  const local::TextOp t = std::get<local::TextOp>(c[0].op);
  EXPECT_EQ(t.text, "Hello, World and Then");
  EXPECT_EQ(t.x, 4);
  EXPECT_EQ(t.y, 5);
  EXPECT_EQ(t.scale, 3);
  EXPECT_EQ(t.color, (local::Rgb{255, 255, 255}));
}

TEST(EditParserTest, UnknownInstructionQuotesClauseAndListsVocabulary) {
  Result<std::vector<EditClause>> r = local::ParseEditInstructions("invert, make it pop");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  const std::string& m = r.error().message;
  EXPECT_NE(m.find("does not understand \"make it pop\""), std::string::npos) << m;
  for (const char* word : {"grayscale", "invert", "rotate 90|180|270", "flip horizontal|vertical",
                           "blur", "sharpen", "brightness", "contrast", "tint", "border", "crop",
                           "resize", "draw square|circle|dot", "text"}) {
    EXPECT_NE(m.find(word), std::string::npos) << word;
  }
}

// The vocabulary and the per-verb usage in errors both come from the parser's table of verbs.
TEST(EditParserTest, VocabularyAndUsageComeFromTheVerbTable) {
  const std::string vocabulary = local::EditVocabulary();
  std::string usages;
  for (const local::EditVerb& verb : local::EditVerbs()) {
    ASSERT_FALSE(verb.names.empty());
    EXPECT_EQ(verb.usage.substr(0, verb.names[0].size()), verb.names[0]) << verb.usage;
    usages += (usages.empty() ? "" : " | ") + std::string(verb.usage);
    std::string usage(verb.usage);
    if (!verb.notes.empty()) usage += " (" + std::string(verb.notes) + ")";
    for (std::string_view name : verb.names) {
      // A word no verb takes: every name reaches this verb's parser, which quotes its usage.
      const std::string clause = std::string(name) + " zzz";
      Result<std::vector<EditClause>> r = local::ParseEditInstructions(clause);
      ASSERT_FALSE(r.ok()) << clause;
      EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << clause;
      const std::string& m = r.error().message;
      EXPECT_EQ(m.rfind("could not apply \"" + clause + "\": ", 0), 0u) << m;
      EXPECT_NE(m.find("; usage: " + usage + ". " + vocabulary), std::string::npos) << m;
    }
  }
  // The vocabulary lists every verb's usage, in table order, and nothing between them.
  EXPECT_NE(vocabulary.find("): " + usages + ". "), std::string::npos) << vocabulary;
}

TEST(EditParserTest, BadArgumentsNameTheClause) {
  for (const char* bad : {"rotate 45", "flip", "blur 0", "brightness lots", "tint", "tint mauvish",
                          "crop 1,2,3", "resize big", "draw hexagon red at 1,1", "draw square red",
                          "border red thick", "text at 1,1", "invert twice", "contrast 900%"}) {
    Result<std::vector<EditClause>> r = local::ParseEditInstructions(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << bad;
    EXPECT_NE(r.error().message.find("\"" + std::string(bad) + "\""), std::string::npos)
        << r.error().message;
    EXPECT_NE(r.error().message.find("grayscale | invert"), std::string::npos) << r.error().message;
  }
  Result<std::vector<EditClause>> quote =
      local::ParseEditInstructions("text \"unterminated at 1,1");
  ASSERT_FALSE(quote.ok());
  EXPECT_NE(quote.error().message.find("unterminated quote"), std::string::npos);
}

TEST(EditParserTest, RotateTakesEveryMultipleOfNinety) {
  for (auto [text, degrees] : std::vector<std::pair<const char*, int>>{{"rotate 0", 0},
                                                                       {"rotate 360", 0},
                                                                       {"rotate 450", 90},
                                                                       {"rotate -90", 270},
                                                                       {"rotate 720 degrees", 0},
                                                                       {"rotate 180 ccw", 180}}) {
    Result<std::vector<EditClause>> r = local::ParseEditInstructions(text);
    ASSERT_TRUE(r.ok()) << text << ": " << r.error().message;
    EXPECT_EQ(std::get<local::RotateOp>((*r)[0].op).degrees, degrees) << text;
  }
  Result<std::vector<EditClause>> r = local::ParseEditInstructions("rotate 100");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("multiple of 90"), std::string::npos) << r.error().message;
}

TEST(EditParserTest, HugeNumbersAreOutOfRangeNotMissing) {
  // Numbers too large for an int used to read as "no number", giving "needs a position".
  for (const char* huge : {"draw dot red at 99999999999,5", "draw square red at 5,-99999999999",
                           "text \"hi\" at 99999999999,1", "crop 0,0,99999999999,5",
                           "resize 99999999999x5", "brightness 99999999999%", "blur 99999999999",
                           "border red 99999999999px", "draw dot red at 1,1 size 99999999999"}) {
    Result<std::vector<EditClause>> r = local::ParseEditInstructions(huge);
    ASSERT_FALSE(r.ok()) << huge;
    const std::string& m = r.error().message;
    EXPECT_TRUE(m.find("range") != std::string::npos || m.find("must be") != std::string::npos)
        << huge << ": " << m;
    EXPECT_EQ(m.find("needs a position"), std::string::npos) << huge << ": " << m;
    EXPECT_EQ(m.find("needs four numbers"), std::string::npos) << huge << ": " << m;
    EXPECT_EQ(m.find("needs a size"), std::string::npos) << huge << ": " << m;
  }
}

TEST(EditParserTest, EmptyInstructionIsAnError) {
  for (const char* empty : {"", "   ", ", ; then and"}) {
    Result<std::vector<EditClause>> r = local::ParseEditInstructions(empty);
    ASSERT_FALSE(r.ok()) << empty;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace imgmcp::local
