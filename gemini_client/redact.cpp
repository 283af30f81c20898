#include "gemini_client/redact.h"

#include <algorithm>

#include "common/ascii.h"

namespace imgmcp::gemini {
namespace {

constexpr size_t kMinSecretLength = 4;

bool IsBase64Url(char c) { return IsAsciiAlnum(c) || c == '-' || c == '_'; }

// What an OAuth 2.0 bearer token is made of (RFC 6750's b64token).
bool IsTokenChar(char c) {
  return IsAsciiAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' ||
         c == '=';
}

size_t SpanOf(std::string_view text, size_t from, bool (*is_part)(char)) {
  size_t end = from;
  while (end < text.size() && is_part(text[end])) ++end;
  return end - from;
}

// The base64url segments of a JWT starting at `at` ("eyJ…" "." "…" and maybe "." "…"): their
// length, or 0 when there are not at least two.
size_t JwtLength(std::string_view text, size_t at) {
  size_t end = at + SpanOf(text, at, IsBase64Url);
  if (end - at < 8 || end >= text.size() || text[end] != '.') return 0;
  const size_t second = SpanOf(text, end + 1, IsBase64Url);
  if (second == 0) return 0;
  end += 1 + second;
  if (end < text.size() && text[end] == '.') end += 1 + SpanOf(text, end + 1, IsBase64Url);
  return end - at;
}

// A credential shaped like one of Redact's at `at`: how many bytes to keep before it (the
// "Bearer " of a header value) and its length after them; 0 when there is none.
size_t CredentialAt(std::string_view text, size_t at, size_t* keep) {
  *keep = 0;
  if (at > 0 && IsAsciiAlnum(text[at - 1])) return 0;  // only at the start of a word
  if (StartsWithIgnoreAsciiCase(text.substr(at), "bearer ")) {
    *keep = 7;
    return SpanOf(text, at + 7, IsTokenChar);
  }
  if (text.compare(at, 5, "ya29.") == 0) return 5 + SpanOf(text, at + 5, IsTokenChar);
  if (text.compare(at, 3, "1//") == 0) {
    const size_t rest = SpanOf(text, at + 3, IsBase64Url);
    return rest >= 8 ? 3 + rest : 0;
  }
  if (text.compare(at, 3, "eyJ") == 0) return JwtLength(text, at);
  return 0;
}

}  // namespace

bool RedactSecrets(std::string& text, const std::vector<std::string>& secrets) {
  std::vector<const std::string*> longest_first;
  for (const std::string& s : secrets) {
    if (s.size() >= kMinSecretLength) longest_first.push_back(&s);
  }
  std::sort(longest_first.begin(), longest_first.end(),
            [](const std::string* a, const std::string* b) { return a->size() > b->size(); });
  bool replaced = false;
  for (const std::string* secret : longest_first) {
    for (size_t pos = text.find(*secret); pos != std::string::npos;
         pos = text.find(*secret, pos + sizeof(kRedacted) - 1)) {
      text.replace(pos, secret->size(), kRedacted);
      replaced = true;
    }
  }
  return replaced;
}

std::string Redact(std::string text, const std::vector<std::string>& secrets) {
  RedactSecrets(text, secrets);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t keep = 0;
    const size_t length = CredentialAt(text, i, &keep);
    if (length == 0) {
      out.push_back(text[i++]);
      continue;
    }
    out.append(text, i, keep);
    out += kRedacted;
    i += keep + length;
  }
  return out;
}

}  // namespace imgmcp::gemini
