#include "imaging/edit_parser.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace imgmcp::imaging {
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

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Error Problem(std::string_view clause, const std::string& detail) {
  return MakeError(ErrorCode::kInvalidArgument, "could not apply \"" + std::string(clause) +
                                                    "\": " + detail + ". " + EditVocabulary());
}

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// A bare word runs up to the next space, comma, semicolon or straight quote.
bool EndsWord(char c) { return IsSpace(c) || c == ',' || c == ';' || c == '"'; }

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
      end - begin > 1 && s[end - 1] == '.' && (end == s.size() || IsSpace(s[end]));
  const size_t word_end = full_stop ? end - 1 : end;
  tokens.push_back(Word(Lower(s.substr(begin, word_end - begin)), begin, word_end));
  if (full_stop) tokens.push_back(Punctuation('.', word_end));
  return end;
}

bool EndsWithDigit(const Token& t) {
  return !t.quoted && !t.separator && !t.text.empty() && IsDigit(t.text.back());
}

bool StartsNumber(const Token& t) {
  return !t.quoted && !t.text.empty() &&
         (IsDigit(t.text[0]) || (t.text.size() > 1 && t.text[0] == '-' && IsDigit(t.text[1])));
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
    if (IsSpace(s[i])) {
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

 private:
  const std::vector<Token>& tokens_;
  size_t i_ = 0;
};

// A number too large for the range checks saturates (so it reads as out of range, not as "no
// number"); anything but digits is nullopt.
constexpr int kSaturated = 2'000'000'000;
std::optional<int> ParseInt(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  bool negative = false;
  if (!s.empty() && s[0] == '-') {
    negative = true;
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (!IsDigit(c)) return std::nullopt;
    v = std::min<int64_t>(v * 10 + (c - '0'), kSaturated);
  }
  return static_cast<int>(negative ? -v : v);
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
    if (text.empty() || !(IsDigit(text[0]) || text[0] == '-' || text[0] == '+')) break;
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

Result<EditOp> ParseClause(std::string_view clause, const std::vector<Token>& tokens) {
  Cursor cur(tokens);
  const std::string verb = cur.Peek()->quoted ? "" : cur.Next().text;
  auto usage = [&](const std::string& detail) { return Problem(clause, detail); };
  auto finish = [&](EditOp op, const std::string& usage_text) -> Result<EditOp> {
    if (!cur.Done()) {
      return usage("unexpected \"" + cur.Peek()->text + "\"; usage: " + usage_text);
    }
    return op;
  };

  if (verb == "grayscale" || verb == "greyscale") return finish(GrayscaleOp{}, "grayscale");
  if (verb == "invert") {
    if (!cur.Accept("colors")) cur.Accept("colours");
    return finish(InvertOp{}, "invert");
  }
  if (verb == "rotate") {
    const std::string kUsage =
        "rotate 90|180|270 [clockwise|counterclockwise] or rotate left|right";
    if (cur.Accept("left")) return finish(RotateOp{270}, kUsage);
    if (cur.Accept("right")) return finish(RotateOp{90}, kUsage);
    std::optional<int> deg;
    if (!cur.Done()) deg = ParseInt(StripSuffix(StripSuffix(cur.Next().text, "\xC2\xB0"), "deg"));
    if (!cur.Accept("degrees")) {
      if (!cur.Accept("deg")) cur.Accept("\xC2\xB0");
    }
    if (!deg) return usage("rotate needs an angle; usage: " + kUsage);
    int d = *deg;
    if (cur.Accept("counterclockwise") || cur.Accept("anticlockwise") || cur.Accept("ccw")) {
      d = -d;
    } else if (!cur.Accept("clockwise")) {
      cur.Accept("cw");
    }
    if (d % 90 != 0) {
      return usage(
          "rotate takes a multiple of 90 degrees (90, 180, 270; 0 and 360 leave the "
          "image as it is); usage: " +
          kUsage);
    }
    return finish(RotateOp{((d % 360) + 360) % 360}, kUsage);
  }
  if (verb == "flip" || verb == "mirror") {
    const std::string kUsage = "flip horizontal|vertical (mirror = flip horizontal)";
    if (verb == "mirror") return finish(FlipOp{true}, kUsage);
    if (cur.Accept("horizontal") || cur.Accept("horizontally") || cur.Accept("h")) {
      return finish(FlipOp{true}, kUsage);
    }
    if (cur.Accept("vertical") || cur.Accept("vertically") || cur.Accept("v")) {
      return finish(FlipOp{false}, kUsage);
    }
    return usage("flip needs a direction; usage: " + kUsage);
  }
  if (verb == "blur") {
    const std::string kUsage = "blur [radius 1-100, default 2]";
    BlurOp op;
    if (!cur.Done()) {
      cur.Accept("radius");
      std::optional<int> r = ReadPixels(cur);
      if (!r || !InRange(*r, 1, 100)) return usage("blur radius must be 1-100; usage: " + kUsage);
      op.radius = *r;
    }
    return finish(op, kUsage);
  }
  if (verb == "sharpen") return finish(SharpenOp{}, "sharpen");
  if (verb == "brightness" || verb == "brighten" || verb == "darken") {
    const std::string kUsage = "brightness ±N% (-100..400), brighten N%, darken N%";
    std::optional<int> p = ReadPercent(cur);
    if (!p) return usage("needs a percentage; usage: " + kUsage);
    int v = verb == "darken" ? -*p : *p;
    if (!InRange(v, -100, 400)) return usage("brightness must be -100..400%; usage: " + kUsage);
    return finish(BrightnessOp{v}, kUsage);
  }
  if (verb == "contrast") {
    const std::string kUsage = "contrast ±N% (-100..400)";
    std::optional<int> p = ReadPercent(cur);
    if (!p || !InRange(*p, -100, 400)) return usage("contrast needs -100..400%; usage: " + kUsage);
    return finish(ContrastOp{*p}, kUsage);
  }
  if (verb == "tint") {
    const std::string kUsage = "tint <colour> [strength 0-100%, default 30%]";
    TintOp op;
    std::optional<Rgb> c = ReadColor(cur);
    if (!c) return usage("tint needs a colour (CSS name or #rrggbb); usage: " + kUsage);
    op.color = *c;
    if (!cur.Done()) {
      std::optional<int> s = ReadPercent(cur);
      if (!s || !InRange(*s, 0, 100))
        return usage("tint strength must be 0-100%; usage: " + kUsage);
      op.strength = *s;
    }
    return finish(op, kUsage);
  }
  if (verb == "border") {
    const std::string kUsage = "border <colour> [width in px, default 10]";
    BorderOp op;
    std::optional<Rgb> c = ReadColor(cur);
    std::optional<int> w;
    if (!c && !cur.Done()) {  // "border 5px red"
      w = ReadPixels(cur);
      c = ReadColor(cur);
    } else if (c && !cur.Done()) {
      w = ReadPixels(cur);
      if (!w) return usage("border width must be a number of pixels; usage: " + kUsage);
    }
    if (!c) return usage("border needs a colour (CSS name or #rrggbb); usage: " + kUsage);
    if (w) {
      if (!InRange(*w, 1, kMaxCoordinate)) {
        return usage("border width must be 1-" + std::to_string(kMaxCoordinate) + " px");
      }
      op.width = *w;
    }
    op.color = *c;
    return finish(op, kUsage);
  }
  if (verb == "crop") {
    const std::string kUsage = "crop X,Y,W,H (pixels; X,Y the top-left corner)";
    std::optional<std::vector<int>> n = ReadNumberList(cur, 4);
    if (!n) return usage("crop needs four numbers; usage: " + kUsage);
    CropOp op{(*n)[0], (*n)[1], (*n)[2], (*n)[3]};
    if (op.width < 1 || op.height < 1) return usage("crop width and height must be at least 1");
    for (int v : *n) {
      if (v > kMaxCoordinate) {
        return usage("crop numbers are out of range (at most " + std::to_string(kMaxCoordinate) +
                     "); usage: " + kUsage);
      }
    }
    return finish(op, kUsage);
  }
  if (verb == "resize" || verb == "scale") {
    const std::string kUsage = "resize WxH (e.g. 512x384) or resize N% (1-1000)";
    cur.Accept("to");
    std::string spec;
    while (!cur.Done() && !cur.Peek()->quoted) spec += cur.Next().text;
    // "×" (U+00D7) and "*" mean x.
    for (size_t pos; (pos = spec.find("\xC3\x97")) != std::string::npos;) spec.replace(pos, 2, "x");
    for (char& ch : spec) {
      if (ch == '*') ch = 'x';
    }
    ResizeOp op;
    if (!spec.empty() && spec.back() == '%') {
      std::optional<int> p = ParseInt(spec.substr(0, spec.size() - 1));
      if (!p || !InRange(*p, 1, 1000))
        return usage("resize percentage must be 1-1000; usage: " + kUsage);
      op.percent = *p;
      return finish(op, kUsage);
    }
    spec = std::string(StripSuffix(spec, "px"));
    const size_t x = spec.find('x');
    std::optional<int> w, h;
    if (x != std::string::npos) {
      w = ParseInt(StripSuffix(spec.substr(0, x), "px"));
      h = ParseInt(spec.substr(x + 1));
    }
    if (!w || !h || *w < 1 || *h < 1)
      return usage("resize needs a size like 512x384; usage: " + kUsage);
    if (*w > kMaxCoordinate || *h > kMaxCoordinate) {
      return usage("resize width and height must be 1-" + std::to_string(kMaxCoordinate) +
                   "; usage: " + kUsage);
    }
    op.width = *w;
    op.height = *h;
    return finish(op, kUsage);
  }
  if (verb == "draw") {
    const std::string kUsage =
        "draw square|circle|dot <colour> at X,Y [size S] (X,Y the top-left of the shape's box; "
        "default size 32, dot 8)";
    if (!cur.Accept("a")) cur.Accept("an");
    std::optional<DrawShape> shape;
    std::optional<Rgb> color;
    for (int k = 0; k < 2 && !cur.Done(); ++k) {
      const std::string& w = cur.Peek()->text;
      if (!shape && (w == "square" || w == "circle" || w == "dot")) {
        shape = w == "square" ? DrawShape::kSquare
                              : (w == "circle" ? DrawShape::kCircle : DrawShape::kDot);
        cur.Next();
      } else if (!color) {
        color = ReadColor(cur);
        if (!color) break;
      }
    }
    if (!shape) return usage("draw needs a shape (square, circle or dot); usage: " + kUsage);
    if (!color) return usage("draw needs a colour (CSS name or #rrggbb); usage: " + kUsage);
    if (!cur.Accept("at")) return usage("draw needs a position \"at X,Y\"; usage: " + kUsage);
    std::optional<std::vector<int>> xy = ReadNumberList(cur, 2);
    if (!xy) return usage("draw needs a position \"at X,Y\"; usage: " + kUsage);
    DrawOp op;
    op.shape = *shape;
    op.color = *color;
    op.x = (*xy)[0];
    op.y = (*xy)[1];
    op.size = *shape == DrawShape::kDot ? 8 : 32;
    if (cur.Accept("size") || (cur.Accept("of") && cur.Accept("size"))) {
      std::optional<int> s = ReadPixels(cur);
      if (!s || !InRange(*s, 1, kMaxCoordinate)) {
        return usage("size must be 1-" + std::to_string(kMaxCoordinate) + " px; usage: " + kUsage);
      }
      op.size = *s;
    }
    if (!InRange(op.x, -kMaxCoordinate, kMaxCoordinate) ||
        !InRange(op.y, -kMaxCoordinate, kMaxCoordinate)) {
      return usage("position is out of range: X and Y must be within -" +
                   std::to_string(kMaxCoordinate) + ".." + std::to_string(kMaxCoordinate) +
                   " (shapes outside the image are clipped)");
    }
    return finish(op, kUsage);
  }
  if (verb == "text" || verb == "write") {
    const std::string kUsage =
        "text \"<words>\" at X,Y [<colour>] [size S] (5x7 font scaled by S, default 2; default "
        "colour black)";
    if (cur.Done() || !cur.Peek()->quoted)
      return usage("text needs quoted words; usage: " + kUsage);
    TextOp op;
    op.text = cur.Next().text;
    if (op.text.empty() || op.text.size() > kMaxTextLength) {
      return usage("text must be 1-200 characters");
    }
    if (!cur.Accept("at")) return usage("text needs a position \"at X,Y\"; usage: " + kUsage);
    std::optional<std::vector<int>> xy = ReadNumberList(cur, 2);
    if (!xy) return usage("text needs a position \"at X,Y\"; usage: " + kUsage);
    if (!InRange((*xy)[0], -kMaxCoordinate, kMaxCoordinate) ||
        !InRange((*xy)[1], -kMaxCoordinate, kMaxCoordinate)) {
      return usage("position is out of range: X and Y must be within -" +
                   std::to_string(kMaxCoordinate) + ".." + std::to_string(kMaxCoordinate));
    }
    op.x = (*xy)[0];
    op.y = (*xy)[1];
    while (!cur.Done()) {
      if (cur.Accept("size")) {
        std::optional<int> s = ReadPixels(cur);
        if (!s || !InRange(*s, 1, 64)) return usage("text size must be 1-64; usage: " + kUsage);
        op.scale = *s;
        continue;
      }
      // Optional filler before the colour: "in red", "colour red", "color red".
      if (!cur.Accept("in") && !cur.Accept("colour")) cur.Accept("color");
      std::optional<Rgb> c = ReadColor(cur);
      if (!c) break;
      op.color = *c;
    }
    return finish(op, kUsage);
  }
  return MakeError(
      ErrorCode::kInvalidArgument,
      "the local backend does not understand \"" + std::string(clause) + "\". " + EditVocabulary());
}

}  // namespace

std::string EditVocabulary() {
  return "The local backend understands these edits (case-insensitive; join several with \",\", "
         "\";\", \"then\" or \"and\"; they apply in order): grayscale | invert | rotate "
         "90|180|270 (clockwise; or left/right) | flip horizontal|vertical | blur [radius] | "
         "sharpen | brightness ±N% | contrast ±N% | tint <colour> [N%] | border <colour> [px] | "
         "crop X,Y,W,H | resize WxH or N% | draw square|circle|dot <colour> at X,Y [size S] | "
         "text \"<words>\" at X,Y [<colour>] [size S]. Colours are CSS names (red, "
         "cornflowerblue, ...) or #rrggbb.";
}

Result<std::vector<EditClause>> ParseEditInstructions(std::string_view prompt) {
  Result<std::vector<Token>> tokens = Tokenize(prompt);
  if (!tokens.ok()) return tokens.error();
  std::vector<EditClause> clauses;
  std::vector<Token> current;
  auto flush = [&]() -> Status {
    if (current.empty()) return Status::Ok();
    const std::string_view source =
        prompt.substr(current.front().begin, current.back().end - current.front().begin);
    Result<EditOp> op = ParseClause(source, current);
    current.clear();
    if (!op.ok()) return op.error();
    clauses.push_back(EditClause{std::string(source), std::move(op.value())});
    return Status::Ok();
  };
  for (Token& t : tokens.value()) {
    const bool joiner = !t.quoted && (t.text == "then" || t.text == "and");
    if (t.separator || joiner) {
      if (Status s = flush(); !s) return s.error();
      continue;
    }
    current.push_back(std::move(t));
  }
  if (Status s = flush(); !s) return s.error();
  if (clauses.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the edit instruction is empty. " + EditVocabulary());
  }
  return clauses;
}

}  // namespace imgmcp::imaging
