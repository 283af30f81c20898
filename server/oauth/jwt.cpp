#include "server/oauth/jwt.h"

#include <array>
#include <cstdint>
#include <vector>

namespace imgmcp::oauth {
namespace {

// The value of each base64url character (RFC 4648 §5), -1 for any other byte.
constexpr std::array<int8_t, 256> MakeUrlDecodeTable() {
  std::array<int8_t, 256> table{};
  for (auto& v : table) v = -1;
  constexpr char kUrlAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  for (int i = 0; i < 64; ++i) {
    table[static_cast<uint8_t>(kUrlAlphabet[i])] = static_cast<int8_t>(i);
  }
  return table;
}
constexpr std::array<int8_t, 256> kUrlDecode = MakeUrlDecodeTable();

// The three dot-separated parts of a compact JWS, or an error naming how many there were.
Result<std::vector<std::string_view>> SplitCompact(std::string_view compact) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = compact.find('.', start);
    parts.push_back(compact.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (parts.size() == 5) {
    return InvalidArgument(
        "the token is an encrypted JWT (JWE, five parts); only signed ones "
        "(JWS, three parts) are accepted");
  }
  if (parts.size() != 3) {
    return InvalidArgument("the token has " + std::to_string(parts.size()) +
                           " dot-separated parts; a signed JWT (JWS) has three");
  }
  return parts;
}

// Decodes one base64url part of the token and parses it as a JSON object; `what` names the part.
Result<Json> DecodeJsonObject(std::string_view part, const char* what) {
  auto bytes = Base64UrlDecode(part);
  if (!bytes.ok()) {
    return InvalidArgument(std::string("the token's ") + what + " is " + bytes.error().message);
  }
  // The parser reads JSON text, in which a raw NUL byte never appears; refusing it here keeps
  // every reader of the claims free of embedded NULs outside escapes.
  if (bytes->find('\0') != std::string::npos) {
    return InvalidArgument(std::string("the token's ") + what + " contains a NUL byte");
  }
  Json value = Json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    return InvalidArgument(std::string("the token's ") + what + " is not valid JSON");
  }
  if (!value.is_object()) {
    return InvalidArgument(std::string("the token's ") + what + " is not a JSON object");
  }
  return value;
}

// Reads the optional string member `name` of the header into `out`; absent leaves it "".
Status ReadOptionalHeaderString(const Json& header, const char* name, std::string& out) {
  const auto it = header.find(name);
  if (it == header.end()) return Status::Ok();
  if (!it->is_string()) {
    return InvalidArgument(std::string("the token header's \"") + name + "\" is not a string");
  }
  out = it->get<std::string>();
  return Status::Ok();
}

// Fills alg, kid and typ from the header and refuses what this server cannot honour.
Status ReadHeader(Jwt& jwt) {
  const auto alg = jwt.header.find("alg");
  if (alg == jwt.header.end()) return InvalidArgument("the token header has no \"alg\"");
  if (!alg->is_string()) return InvalidArgument("the token header's \"alg\" is not a string");
  jwt.alg = alg->get<std::string>();
  // RFC 7515 §4.1.11: a recipient that does not understand every listed extension must refuse
  // the token, and this one understands none.
  if (jwt.header.contains("crit")) {
    return InvalidArgument(
        "the token header names critical extensions (\"crit\"), which are "
        "not supported");
  }
  RETURN_IF_ERROR(ReadOptionalHeaderString(jwt.header, "kid", jwt.kid));
  RETURN_IF_ERROR(ReadOptionalHeaderString(jwt.header, "typ", jwt.typ));
  return Status::Ok();
}

}  // namespace

Result<std::string> Base64UrlDecode(std::string_view text) {
  if (text.size() % 4 == 1)
    return InvalidArgument("not base64url: its length leaves one character over");
  std::string out;
  out.reserve(text.size() / 4 * 3 + 2);
  uint32_t bits = 0;
  int bit_count = 0;
  for (const char c : text) {
    const int8_t value = kUrlDecode[static_cast<uint8_t>(c)];
    if (value < 0) {
      return InvalidArgument(
          "not unpadded base64url: it holds a character outside A-Z, a-z, 0-9, '-' and '_'");
    }
    bits = (bits << 6) | static_cast<uint32_t>(value);
    bit_count += 6;
    if (bit_count >= 8) {
      bit_count -= 8;
      out.push_back(static_cast<char>((bits >> bit_count) & 0xFF));
    }
  }
  // The 2 or 4 bits left over after the last whole byte must be zero: otherwise a second
  // spelling of the same bytes would be accepted (RFC 4648 §3.5).
  if ((bits & ((1U << bit_count) - 1)) != 0) {
    return InvalidArgument("not canonical base64url: its unused trailing bits are not zero");
  }
  return out;
}

Result<Jwt> ParseJwt(std::string_view compact) {
  if (compact.size() > kMaxTokenBytes) {
    return InvalidArgument("the token is longer than " + std::to_string(kMaxTokenBytes) + " bytes");
  }
  ASSIGN_OR_RETURN(const auto parts, SplitCompact(compact));
  Jwt jwt;
  ASSIGN_OR_RETURN(jwt.header, DecodeJsonObject(parts[0], "header"));
  RETURN_IF_ERROR(ReadHeader(jwt));
  ASSIGN_OR_RETURN(jwt.claims, DecodeJsonObject(parts[1], "payload"));
  auto signature = Base64UrlDecode(parts[2]);
  if (!signature.ok()) {
    return InvalidArgument("the token's signature is " + signature.error().message);
  }
  if (signature->empty()) return InvalidArgument("the token's signature is empty (unsigned)");
  jwt.signature = std::move(*signature);
  jwt.signing_input = std::string(compact.substr(0, parts[0].size() + 1 + parts[1].size()));
  return jwt;
}

}  // namespace imgmcp::oauth
