#include "local_backend/edit_parser.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

#include "common/ascii.h"
#include "common/decimal.h"

namespace imgmcp::local {
namespace {

constexpr int kMaxCoordinate = 1'000'000;
constexpr size_t kMaxTextLength = 200;

struct Token {
  std::string text;  // lowercased unless quoted
  size_t begin = 0;
  size_t end = 0;
  bool quoted = false;
  bool separator = false;
  bool comma = false;
};

// A bare word runs up to the next space, comma, semicolon or straight quote.
bool EndsWord(char c) { return IsAsciiWhitespace(c) || c == ',' || c == ';' || c == '"'; }

Token Word(std::string text, size_t begin, size_t end) {
  Token t;
  t.text = std::move(text);
  t.begin = begin;
  t.end = end;
  return t;
}

// ";" and "." separate clauses; whether a "," does is decided later (JoinCoordinateCommas).
Token Punctuation(char c, size_t at) {
  Token t = Word(std::string(1, c), at, at + 1);
  t.separator = c == ';' || c == '.';
  t.comma = c == ',';
  return t;
}

// A quoted string opens with a straight quote or U+201C and closes with a straight quote or U+201D.
constexpr std::string_view kOpenQuote = "\xE2\x80\x9C", kCloseQuote = "\xE2\x80\x9D";

// The length of the opening quote at s[i], or 0 when none starts there.
size_t OpeningQuoteAt(std::string_view s, size_t i) {
  if (s[i] == '"') return 1;
  return s.substr(i, kOpenQuote.size()) == kOpenQuote ? kOpenQuote.size() : 0;
}

// The length of the closing quote at s[i], or 0 when none starts there.
size_t ClosingQuoteAt(std::string_view s, size_t i) {
  if (s[i] == '"') return 1;
  return s.substr(i, kCloseQuote.size()) == kCloseQuote ? kCloseQuote.size() : 0;
}

// The quoted string opening at s[begin], its words kept as written (not lowercased).
Result<Token> ReadQuoted(std::string_view s, size_t begin) {
  const size_t text_begin = begin + OpeningQuoteAt(s, begin);
  for (size_t i = text_begin; i < s.size(); ++i) {
    const size_t close_len = ClosingQuoteAt(s, i);
    if (close_len == 0) continue;
    Token t = Word(std::string(s.substr(text_begin, i - text_begin)), begin, i + close_len);
    t.quoted = true;
    return t;
  }
  return MakeError(ErrorCode::kInvalidArgument,
                   "unterminated quote in the edit instruction: " + std::string(s.substr(begin)));
}

// Appends the bare word starting at s[begin], lowercased, and returns where it ends. A word-final
// full stop ends a sentence ("invert. rotate 90."), i.e. a clause, so it becomes a separator.
size_t ReadWord(std::string_view s, size_t begin, std::vector<Token>& tokens) {
  size_t end = begin;
  while (end < s.size() && !EndsWord(s[end])) ++end;
  const bool full_stop =
      end - begin > 1 && s[end - 1] == '.' && (end == s.size() || IsAsciiWhitespace(s[end]));
  const size_t word_end = full_stop ? end - 1 : end;
  tokens.push_back(Word(AsciiLower(s.substr(begin, word_end - begin)), begin, word_end));
  if (full_stop) tokens.push_back(Punctuation('.', word_end));
  return end;
}

bool EndsWithDigit(const Token& t) {
  return !t.quoted && !t.separator && !t.text.empty() && IsAsciiDigit(t.text.back());
}

bool StartsNumber(const Token& t) {
  return !t.quoted && !t.text.empty() &&
         (IsAsciiDigit(t.text[0]) ||
          (t.text.size() > 1 && t.text[0] == '-' && IsAsciiDigit(t.text[1])));
}

// A comma between two numbers ("crop 10, 20, 30, 40", "at 5,5") belongs to a coordinate list: the
// comma and the number after it join the number before. Any other comma separates clauses.
std::vector<Token> JoinCoordinateCommas(std::vector<Token> tokens) {
  std::vector<Token> joined;
  for (size_t k = 0; k < tokens.size(); ++k) {
    Token& t = tokens[k];
    if (t.comma) {
      if (!joined.empty() && EndsWithDigit(joined.back()) && k + 1 < tokens.size() &&
          StartsNumber(tokens[k + 1])) {
        joined.back().text += "," + tokens[k + 1].text;
        joined.back().end = tokens[k + 1].end;
        ++k;
        continue;
      }
      t.separator = true;
    }
    joined.push_back(std::move(t));
  }
  return joined;
}

// Splits the prompt into words, quoted strings and separators, with their offsets.
Result<std::vector<Token>> Tokenize(std::string_view s) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < s.size()) {
    if (IsAsciiWhitespace(s[i])) {
      ++i;
    } else if (s[i] == ';' || s[i] == ',') {
      tokens.push_back(Punctuation(s[i], i));
      ++i;
    } else if (OpeningQuoteAt(s, i) > 0) {
      ASSIGN_OR_RETURN(Token quoted, ReadQuoted(s, i));
      i = quoted.end;
      tokens.push_back(std::move(quoted));
    } else {
      i = ReadWord(s, i, tokens);
    }
  }
  return JoinCoordinateCommas(std::move(tokens));
}

// Groups the tokens into clauses at separators and at the joining words "then" and "and". No
// clause is empty.
std::vector<std::vector<Token>> SplitClauses(std::vector<Token> tokens) {
  std::vector<std::vector<Token>> clauses(1);
  for (Token& t : tokens) {
    const bool joiner = !t.quoted && (t.text == "then" || t.text == "and");
    if (t.separator || joiner) {
      if (!clauses.back().empty()) clauses.emplace_back();
      continue;
    }
    clauses.back().push_back(std::move(t));
  }
  if (clauses.back().empty()) clauses.pop_back();
  return clauses;
}

// Reads the clause's words one at a time.
class Cursor {
 public:
  explicit Cursor(const std::vector<Token>& tokens) : tokens_(tokens) {}
  bool Done() const { return i_ >= tokens_.size(); }
  const Token* Peek() const { return Done() ? nullptr : &tokens_[i_]; }
  bool PeekIs(std::string_view word) const {
    return !Done() && !tokens_[i_].quoted && tokens_[i_].text == word;
  }
  const Token& Next() { return tokens_[i_++]; }
  bool Accept(std::string_view word) {
    if (!PeekIs(word)) return false;
    ++i_;
    return true;
  }
  // Accepts the first of `words` that comes next, if any.
  bool AcceptAny(std::initializer_list<std::string_view> words) {
    return std::any_of(words.begin(), words.end(),
                       [this](std::string_view w) { return Accept(w); });
  }

 private:
  const std::vector<Token>& tokens_;
  size_t i_ = 0;
};

// A number too large for the range checks saturates (so it reads as out of range, not as "no
// number"); anything but digits is nullopt.
constexpr int kSaturated = 2'000'000'000;
std::optional<int> ParseInt(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);  // a prompt may write "+20"
  const std::optional<int64_t> v = ParseDecimalSaturating<int64_t>(s);
  if (!v) return std::nullopt;
  return static_cast<int>(std::clamp<int64_t>(*v, -kSaturated, kSaturated));
}

std::string_view StripSuffix(std::string_view s, std::string_view suffix) {
  if (s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix) {
    s.remove_suffix(suffix.size());
  }
  return s;
}

// "20%", "+20 %", "-5" -> percent value.
std::optional<int> ReadPercent(Cursor& cur) {
  if (cur.Done() || cur.Peek()->quoted) return std::nullopt;
  std::optional<int> v = ParseInt(StripSuffix(cur.Next().text, "%"));
  cur.Accept("%");
  cur.Accept("percent");
  return v;
}

// "12", "12px", "12 px" -> pixels.
std::optional<int> ReadPixels(Cursor& cur) {
  if (cur.Done() || cur.Peek()->quoted) return std::nullopt;
  std::optional<int> v = ParseInt(StripSuffix(cur.Next().text, "px"));
  cur.Accept("px");
  cur.Accept("pixels");
  return v;
}

// "10,20" (one merged token) or "10 20" -> n integers.
std::optional<std::vector<int>> ReadNumberList(Cursor& cur, size_t n) {
  std::vector<int> out;
  while (out.size() < n && !cur.Done() && !cur.Peek()->quoted) {
    const std::string& text = cur.Peek()->text;
    if (text.empty() || !(IsAsciiDigit(text[0]) || text[0] == '-' || text[0] == '+')) break;
    cur.Next();
    size_t start = 0;
    while (start <= text.size()) {
      size_t comma = text.find(',', start);
      if (comma == std::string::npos) comma = text.size();
      std::optional<int> v = ParseInt(StripSuffix(text.substr(start, comma - start), "px"));
      if (!v) return std::nullopt;
      out.push_back(*v);
      start = comma + 1;
    }
  }
  if (out.size() != n) return std::nullopt;
  return out;
}

std::optional<Rgb> ReadColor(Cursor& cur) {
  if (cur.Done() || cur.Peek()->quoted) return std::nullopt;
  std::optional<Rgb> c = ParseColor(cur.Peek()->text);
  if (c) cur.Next();
  return c;
}

bool InRange(int v, int lo, int hi) { return v >= lo && v <= hi; }

// What a verb's parser reports when the words after the verb do not fit: the detail only. The
// clause, the verb's usage and the vocabulary are added by ParseClause.
Error ArgumentError(std::string detail) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(detail));
}

struct Position {
  int x = 0, y = 0;
};

// "at X,Y". `verb` names the clause in the error.
Result<Position> ReadPosition(Cursor& args, std::string_view verb) {
  std::optional<std::vector<int>> xy;
  if (args.Accept("at")) xy = ReadNumberList(args, 2);
  if (!xy) return ArgumentError(std::string(verb) + " needs a position \"at X,Y\"");
  return Position{(*xy)[0], (*xy)[1]};
}

bool PositionInRange(const Position& p) {
  return InRange(p.x, -kMaxCoordinate, kMaxCoordinate) &&
         InRange(p.y, -kMaxCoordinate, kMaxCoordinate);
}

// Reads the words after the verb (`verb` is the verb as written: a name of its table entry).
// Words it leaves unread make the clause an error.
using ArgumentParser = Result<EditOp> (*)(std::string_view verb, Cursor& args);

template <typename Op>
Result<EditOp> ParseNoArguments(std::string_view, Cursor&) {
  return EditOp{Op{}};
}

// "invert", "invert colours".
Result<EditOp> ParseInvert(std::string_view, Cursor& args) {
  args.AcceptAny({"colors", "colours"});
  return EditOp{InvertOp{}};
}

// "rotate 90", "rotate 90° ccw", "rotate -90 degrees", "rotate left".
Result<EditOp> ParseRotate(std::string_view, Cursor& args) {
  if (args.Accept("left")) return EditOp{RotateOp{270}};
  if (args.Accept("right")) return EditOp{RotateOp{90}};
  std::optional<int> degrees;
  if (!args.Done()) {
    degrees = ParseInt(StripSuffix(StripSuffix(args.Next().text, "\xC2\xB0"), "deg"));
  }
  args.AcceptAny({"degrees", "deg", "\xC2\xB0"});
  if (!degrees) return ArgumentError("rotate needs an angle");
  int d = *degrees;
  if (args.AcceptAny({"counterclockwise", "anticlockwise", "ccw"})) {
    d = -d;
  } else {
    args.AcceptAny({"clockwise", "cw"});
  }
  if (d % 90 != 0) {
    return ArgumentError(
        "rotate takes a multiple of 90 degrees (90, 180, 270; 0 and 360 leave the image as it is)");
  }
  return EditOp{RotateOp{((d % 360) + 360) % 360}};
}

// "flip horizontal", "flip v", "mirror".
Result<EditOp> ParseFlip(std::string_view verb, Cursor& args) {
  if (verb == "mirror") return EditOp{FlipOp{true}};
  if (args.AcceptAny({"horizontal", "horizontally", "h"})) return EditOp{FlipOp{true}};
  if (args.AcceptAny({"vertical", "vertically", "v"})) return EditOp{FlipOp{false}};
  return ArgumentError("flip needs a direction");
}

// "blur", "blur 5", "blur radius 5px".
Result<EditOp> ParseBlur(std::string_view, Cursor& args) {
  BlurOp op;
  if (args.Done()) return EditOp{op};
  args.Accept("radius");
  std::optional<int> radius = ReadPixels(args);
  if (!radius || !InRange(*radius, 1, 100)) return ArgumentError("blur radius must be 1-100");
  op.radius = *radius;
  return EditOp{op};
}

// "brightness +20%", "brighten 20%", "darken 20%" (= brightness -20%).
Result<EditOp> ParseBrightness(std::string_view verb, Cursor& args) {
  std::optional<int> percent = ReadPercent(args);
  if (!percent) return ArgumentError("needs a percentage");
  const int v = verb == "darken" ? -*percent : *percent;
  if (!InRange(v, -100, 400)) return ArgumentError("brightness must be -100..400%");
  return EditOp{BrightnessOp{v}};
}

// "contrast -15%".
Result<EditOp> ParseContrast(std::string_view, Cursor& args) {
  std::optional<int> percent = ReadPercent(args);
  if (!percent || !InRange(*percent, -100, 400)) return ArgumentError("contrast needs -100..400%");
  return EditOp{ContrastOp{*percent}};
}

// "tint orange", "tint #102030 55%".
Result<EditOp> ParseTint(std::string_view, Cursor& args) {
  TintOp op;
  std::optional<Rgb> color = ReadColor(args);
  if (!color) return ArgumentError("tint needs a colour (CSS name or #rrggbb)");
  op.color = *color;
  if (!args.Done()) {
    std::optional<int> strength = ReadPercent(args);
    if (!strength || !InRange(*strength, 0, 100)) {
      return ArgumentError("tint strength must be 0-100%");
    }
    op.strength = *strength;
  }
  return EditOp{op};
}

// "border navy", "border white 4px", "border 5px red".
Result<EditOp> ParseBorder(std::string_view, Cursor& args) {
  std::optional<Rgb> color = ReadColor(args);
  std::optional<int> width;
  if (!color && !args.Done()) {
    width = ReadPixels(args);
    color = ReadColor(args);
  } else if (color && !args.Done()) {
    width = ReadPixels(args);
    if (!width) return ArgumentError("border width must be a number of pixels");
  }
  if (!color) return ArgumentError("border needs a colour (CSS name or #rrggbb)");
  BorderOp op;
  op.color = *color;
  if (width) {
    if (!InRange(*width, 1, kMaxCoordinate)) {
      return ArgumentError("border width must be 1-" + std::to_string(kMaxCoordinate) + " px");
    }
    op.width = *width;
  }
  return EditOp{op};
}

// "crop 10,20,300,200", "crop 10 20 300 200".
Result<EditOp> ParseCrop(std::string_view, Cursor& args) {
  std::optional<std::vector<int>> n = ReadNumberList(args, 4);
  if (!n) return ArgumentError("crop needs four numbers");
  const CropOp op{(*n)[0], (*n)[1], (*n)[2], (*n)[3]};
  if (op.width < 1 || op.height < 1) {
    return ArgumentError("crop width and height must be at least 1");
  }
  if (std::any_of(n->begin(), n->end(), [](int v) { return v > kMaxCoordinate; })) {
    return ArgumentError("crop numbers are out of range (at most " +
                         std::to_string(kMaxCoordinate) + ")");
  }
  return EditOp{op};
}

// The rest of the clause as one word, with "×" (U+00D7) and "*" read as "x": "300 × 200" ->
// "300x200".
std::string ReadSizeSpec(Cursor& args) {
  std::string spec;
  while (!args.Done() && !args.Peek()->quoted) spec += args.Next().text;
  for (size_t pos; (pos = spec.find("\xC3\x97")) != std::string::npos;) spec.replace(pos, 2, "x");
  std::replace(spec.begin(), spec.end(), '*', 'x');
  return spec;
}

// "resize 512x384", "resize to 300×200", "resize 50%", "scale 512 x 384 px".
Result<EditOp> ParseResize(std::string_view, Cursor& args) {
  args.Accept("to");
  std::string spec = ReadSizeSpec(args);
  ResizeOp op;
  if (!spec.empty() && spec.back() == '%') {
    std::optional<int> percent = ParseInt(spec.substr(0, spec.size() - 1));
    if (!percent || !InRange(*percent, 1, 1000)) {
      return ArgumentError("resize percentage must be 1-1000");
    }
    op.percent = *percent;
    return EditOp{op};
  }
  spec = std::string(StripSuffix(spec, "px"));
  const size_t x = spec.find('x');
  std::optional<int> w, h;
  if (x != std::string::npos) {
    w = ParseInt(StripSuffix(spec.substr(0, x), "px"));
    h = ParseInt(spec.substr(x + 1));
  }
  if (!w || !h || *w < 1 || *h < 1) return ArgumentError("resize needs a size like 512x384");
  if (*w > kMaxCoordinate || *h > kMaxCoordinate) {
    return ArgumentError("resize width and height must be 1-" + std::to_string(kMaxCoordinate));
  }
  op.width = *w;
  op.height = *h;
  return EditOp{op};
}

std::optional<DrawShape> ShapeNamed(std::string_view word) {
  if (word == "square") return DrawShape::kSquare;
  if (word == "circle") return DrawShape::kCircle;
  if (word == "dot") return DrawShape::kDot;
  return std::nullopt;
}

struct ShapeAndColor {
  std::optional<DrawShape> shape;
  std::optional<Rgb> color;
};

// "circle red" or "red circle": the shape and the colour in either order. Stops at a word that is
// neither, leaving it unread.
ShapeAndColor ReadShapeAndColor(Cursor& args) {
  ShapeAndColor out;
  for (int k = 0; k < 2 && !args.Done(); ++k) {
    const std::optional<DrawShape> shape = out.shape ? std::nullopt : ShapeNamed(args.Peek()->text);
    if (shape) {
      out.shape = shape;
      args.Next();
    } else if (!out.color) {
      out.color = ReadColor(args);
      if (!out.color) break;
    }
  }
  return out;
}

std::string PositionOutOfRange() {
  return "position is out of range: X and Y must be within -" + std::to_string(kMaxCoordinate) +
         ".." + std::to_string(kMaxCoordinate);
}

// "draw circle red at 5,6 size 7", "draw a red dot at 1,2", "draw square red at 0,0 of size 9".
Result<EditOp> ParseDraw(std::string_view, Cursor& args) {
  args.AcceptAny({"a", "an"});
  const ShapeAndColor what = ReadShapeAndColor(args);
  if (!what.shape) return ArgumentError("draw needs a shape (square, circle or dot)");
  if (!what.color) return ArgumentError("draw needs a colour (CSS name or #rrggbb)");
  ASSIGN_OR_RETURN(const Position at, ReadPosition(args, "draw"));
  DrawOp op;
  op.shape = *what.shape;
  op.color = *what.color;
  op.x = at.x;
  op.y = at.y;
  op.size = op.shape == DrawShape::kDot ? 8 : 32;
  if (args.Accept("size") || (args.Accept("of") && args.Accept("size"))) {
    std::optional<int> size = ReadPixels(args);
    if (!size || !InRange(*size, 1, kMaxCoordinate)) {
      return ArgumentError("size must be 1-" + std::to_string(kMaxCoordinate) + " px");
    }
    op.size = *size;
  }
  if (!PositionInRange(at)) {
    return ArgumentError(PositionOutOfRange() + " (shapes outside the image are clipped)");
  }
  return EditOp{op};
}

// After the position of a text: "[<colour>] [size S]" in any order; the colour may follow "in",
// "colour" or "color". Stops at the first word that fits neither, leaving it unread.
Status ReadTextStyle(Cursor& args, TextOp& op) {
  while (!args.Done()) {
    if (args.Accept("size")) {
      std::optional<int> scale = ReadPixels(args);
      if (!scale || !InRange(*scale, 1, 64)) return ArgumentError("text size must be 1-64");
      op.scale = *scale;
      continue;
    }
    args.AcceptAny({"in", "colour", "color"});
    std::optional<Rgb> color = ReadColor(args);
    if (!color) break;
    op.color = *color;
  }
  return Status::Ok();
}

// "text "Hello" at 4,5 white size 3", "write "Hi" at 0,0 in red".
Result<EditOp> ParseText(std::string_view, Cursor& args) {
  if (args.Done() || !args.Peek()->quoted) return ArgumentError("text needs quoted words");
  TextOp op;
  op.text = args.Next().text;
  if (op.text.empty() || op.text.size() > kMaxTextLength) {
    return ArgumentError("text must be 1-" + std::to_string(kMaxTextLength) + " characters");
  }
  ASSIGN_OR_RETURN(const Position at, ReadPosition(args, "text"));
  if (!PositionInRange(at)) return ArgumentError(PositionOutOfRange());
  op.x = at.x;
  op.y = at.y;
  RETURN_IF_ERROR(ReadTextStyle(args, op));
  return EditOp{std::move(op)};
}

struct VerbEntry {
  EditVerb verb;
  ArgumentParser parse;
};

// The vocabulary, in the order EditVocabulary() lists it.
const std::vector<VerbEntry>& VerbTable() {
  static const std::vector<VerbEntry> kTable = {
      {{{"grayscale", "greyscale"}, "grayscale", ""}, ParseNoArguments<GrayscaleOp>},
      {{{"invert"}, "invert", ""}, ParseInvert},
      {{{"rotate"}, "rotate 90|180|270 [clockwise|counterclockwise] or rotate left|right", ""},
       ParseRotate},
      {{{"flip", "mirror"}, "flip horizontal|vertical", "mirror = flip horizontal"}, ParseFlip},
      {{{"blur"}, "blur [radius]", "radius 1-100, default 2"}, ParseBlur},
      {{{"sharpen"}, "sharpen", ""}, ParseNoArguments<SharpenOp>},
      {{{"brightness", "brighten", "darken"},
        "brightness ±N%",
        "-100..400; also brighten N%, darken N%"},
       ParseBrightness},
      {{{"contrast"}, "contrast ±N%", "-100..400"}, ParseContrast},
      {{{"tint"}, "tint <colour> [N%]", "strength 0-100%, default 30%"}, ParseTint},
      {{{"border"}, "border <colour> [px]", "width in px, default 10"}, ParseBorder},
      {{{"crop"}, "crop X,Y,W,H", "pixels; X,Y the top-left corner"}, ParseCrop},
      {{{"resize", "scale"}, "resize WxH or N%", "e.g. 512x384; N 1-1000"}, ParseResize},
      {{{"draw"},
        "draw square|circle|dot <colour> at X,Y [size S]",
        "X,Y the top-left of the shape's box; default size 32, dot 8"},
       ParseDraw},
      {{{"text", "write"},
        "text \"<words>\" at X,Y [<colour>] [size S]",
        "5x7 font scaled by S, default 2; default colour black"},
       ParseText},
  };
  return kTable;
}

const VerbEntry* FindVerb(const Token& word) {
  if (word.quoted) return nullptr;
  for (const VerbEntry& entry : VerbTable()) {
    const std::vector<std::string_view>& names = entry.verb.names;
    if (std::find(names.begin(), names.end(), word.text) != names.end()) return &entry;
  }
  return nullptr;
}

std::string UsageOf(const EditVerb& verb) {
  std::string usage(verb.usage);
  if (!verb.notes.empty()) usage += " (" + std::string(verb.notes) + ")";
  return usage;
}

// One clause: its first word picks the verb and the verb's parser reads the rest, which it must
// use up. An error quotes the clause and, for a known verb, gives that verb's usage.
Result<EditOp> ParseClause(std::string_view clause, const std::vector<Token>& tokens) {
  Cursor args(tokens);
  const VerbEntry* entry = FindVerb(*args.Peek());
  if (entry == nullptr) {
    return MakeError(ErrorCode::kInvalidArgument, "the local backend does not understand \"" +
                                                      std::string(clause) + "\". " +
                                                      EditVocabulary());
  }
  const std::string& verb = args.Next().text;
  Result<EditOp> op = entry->parse(verb, args);
  if (op.ok() && !args.Done()) op = ArgumentError("unexpected \"" + args.Peek()->text + "\"");
  if (!op.ok()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "could not apply \"" + std::string(clause) + "\": " + op.error().message +
                         "; usage: " + UsageOf(entry->verb) + ". " + EditVocabulary());
  }
  return op;
}

}  // namespace

const std::vector<EditVerb>& EditVerbs() {
  static const std::vector<EditVerb> kVerbs = [] {
    std::vector<EditVerb> verbs;
    for (const VerbEntry& entry : VerbTable()) verbs.push_back(entry.verb);
    return verbs;
  }();
  return kVerbs;
}

std::string EditVocabulary() {
  std::string text =
      "The local backend understands these edits (case-insensitive; join several with \",\", "
      "\";\", \"then\" or \"and\"; they apply in order): ";
  std::string_view separator;
  for (const EditVerb& verb : EditVerbs()) {
    text.append(separator).append(verb.usage);
    separator = " | ";
  }
  return text + ". Colours are CSS names (red, cornflowerblue, ...) or #rrggbb.";
}

Result<std::vector<EditClause>> ParseEditInstructions(std::string_view prompt) {
  ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(prompt));
  std::vector<EditClause> clauses;
  for (const std::vector<Token>& words : SplitClauses(std::move(tokens))) {
    const std::string_view source =
        prompt.substr(words.front().begin, words.back().end - words.front().begin);
    ASSIGN_OR_RETURN(EditOp op, ParseClause(source, words));
    clauses.push_back(EditClause{std::string(source), std::move(op)});
  }
  if (clauses.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the edit instruction is empty. " + EditVocabulary());
  }
  return clauses;
}

}  // namespace imgmcp::local
