// The local backend's edit vocabulary: parses an instruction such as
// "rotate 90, tint orange 20% then draw circle red at 10,10 size 40" into typed operations.
// Parsing is all-or-nothing: any clause it does not understand makes the whole edit an error.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/result.h"
#include "local_backend/colors.h"

namespace imgmcp::local {

struct GrayscaleOp {};
struct InvertOp {};
struct RotateOp {
  int degrees = 90;  // 90, 180 or 270, clockwise
};
struct FlipOp {
  bool horizontal = true;  // mirror left-right; false = upside down
};
struct BlurOp {
  int radius = 2;  // box blur, window 2*radius+1
};
struct SharpenOp {};
struct BrightnessOp {
  int percent = 0;  // -100..400: v' = v * (100 + percent) / 100
};
struct ContrastOp {
  int percent = 0;  // -100..400: v' = (v - 128) * (100 + percent) / 100 + 128
};
struct TintOp {
  Rgb color;
  int strength = 30;  // 0..100: v' = v * (100 - s) / 100 + c * s / 100
};
struct BorderOp {
  Rgb color;
  int width = 10;  // painted inside the image; the size is unchanged
};
struct CropOp {
  int x = 0, y = 0, width = 0, height = 0;
};
struct ResizeOp {
  int width = 0, height = 0;  // both set, or
  int percent = 0;            // a uniform scale (1..1000)
};
enum class DrawShape { kSquare, kCircle, kDot };
struct DrawOp {
  DrawShape shape = DrawShape::kSquare;
  Rgb color;
  int x = 0, y = 0;  // top-left of the shape's bounding box
  int size = 32;     // bounding box edge; default 32 (square, circle) or 8 (dot)
};
struct TextOp {
  std::string text;
  int x = 0, y = 0;  // top-left of the first glyph
  Rgb color;         // default black
  int scale = 2;     // each 5x7 font pixel becomes scale x scale
};

using EditOp =
    std::variant<GrayscaleOp, InvertOp, RotateOp, FlipOp, BlurOp, SharpenOp, BrightnessOp,
                 ContrastOp, TintOp, BorderOp, CropOp, ResizeOp, DrawOp, TextOp>;

struct EditClause {
  std::string source;  // the clause as written, for messages
  EditOp op;
};

// Parses the whole instruction. kInvalidArgument quoting the first clause it does not understand
// (with that verb's usage when the verb is known) and listing the vocabulary.
Result<std::vector<EditClause>> ParseEditInstructions(std::string_view prompt);

// One verb of the vocabulary, as the parser's table of verbs holds it. EditVocabulary() lists
// every `usage`; an error about a clause with this verb gives "usage: <usage> (<notes>)".
struct EditVerb {
  std::vector<std::string_view> names;  // what the clause may start with; the usage shows the first
  std::string_view usage;               // e.g. "crop X,Y,W,H"
  std::string_view notes;               // ranges, defaults and synonyms; may be empty
};

// Every verb the parser understands, in the order EditVocabulary() lists them.
const std::vector<EditVerb>& EditVerbs();

// One-paragraph summary of the vocabulary, used in error messages: the usage of every verb.
std::string EditVocabulary();

}  // namespace imgmcp::local
