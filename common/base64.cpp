#include "common/base64.h"

#include <array>
#include <cstdint>

namespace imgmcp {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int8_t, 256> MakeDecodeTable() {
  std::array<int8_t, 256> table{};
  for (auto& v : table) v = -1;
  for (int i = 0; i < 64; ++i) table[static_cast<uint8_t>(kAlphabet[i])] = static_cast<int8_t>(i);
  table[static_cast<uint8_t>('-')] = 62;  // URL-safe alphabet
  table[static_cast<uint8_t>('_')] = 63;
  return table;
}
constexpr std::array<int8_t, 256> kDecode = MakeDecodeTable();

}  // namespace

size_t Base64EncodedSize(size_t raw_size) { return (raw_size + 2) / 3 * 4; }

void Base64EncodeAppend(std::string_view bytes, std::string& out) {
  const size_t start = out.size();
  out.resize(start + Base64EncodedSize(bytes.size()));
  char* dst = out.data() + start;
  const auto* src = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t i = 0;
  const size_t n = bytes.size();
  for (; i + 3 <= n; i += 3) {
    const uint32_t v = (uint32_t{src[i]} << 16) | (uint32_t{src[i + 1]} << 8) | src[i + 2];
    *dst++ = kAlphabet[(v >> 18) & 63];
    *dst++ = kAlphabet[(v >> 12) & 63];
    *dst++ = kAlphabet[(v >> 6) & 63];
    *dst++ = kAlphabet[v & 63];
  }
  if (i < n) {
    uint32_t v = uint32_t{src[i]} << 16;
    if (i + 1 < n) v |= uint32_t{src[i + 1]} << 8;
    *dst++ = kAlphabet[(v >> 18) & 63];
    *dst++ = kAlphabet[(v >> 12) & 63];
    *dst++ = (i + 1 < n) ? kAlphabet[(v >> 6) & 63] : '=';
    *dst++ = '=';
  }
}

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  Base64EncodeAppend(bytes, out);
  return out;
}

Result<std::string> Base64Decode(std::string_view text) {
  // Strip trailing padding; padding anywhere else is an error.
  size_t len = text.size();
  int pads = 0;
  while (len > 0 && text[len - 1] == '=' && pads < 2) {
    --len;
    ++pads;
  }
  if (len % 4 == 1) {
    return Error(ErrorCode::kInvalidArgument, "invalid base64: length is not a valid encoding");
  }
  std::string out;
  out.reserve(len / 4 * 3 + 3);
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < len; ++i) {
    const int8_t d = kDecode[static_cast<uint8_t>(text[i])];
    if (d < 0) {
      return Error(ErrorCode::kInvalidArgument,
                   "invalid base64: unexpected character at offset " + std::to_string(i));
    }
    acc = (acc << 6) | static_cast<uint32_t>(d);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

}  // namespace imgmcp
