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

// Every 12-bit value as its two alphabet characters: half the lookups of a 6-bit table.
constexpr std::array<std::array<char, 2>, 4096> MakePairTable() {
  std::array<std::array<char, 2>, 4096> table{};
  for (int i = 0; i < 4096; ++i) table[i] = {kAlphabet[i >> 6], kAlphabet[i & 63]};
  return table;
}
constexpr std::array<std::array<char, 2>, 4096> kPairs = MakePairTable();

}  // namespace

size_t Base64EncodedSize(size_t raw_size) { return (raw_size + 2) / 3 * 4; }

// Multi-megabyte images go through here on every full-size result and Gemini answer, so the hot
// loops work on whole groups (3 bytes ↔ 4 characters) written into pre-sized buffers, with no
// per-character branches or push_back.
void Base64EncodeAppend(std::string_view bytes, std::string& out) {
  const size_t start = out.size();
  out.resize(start + Base64EncodedSize(bytes.size()));
  char* dst = out.data() + start;
  const auto* src = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t i = 0;
  const size_t n = bytes.size();
  for (; i + 3 <= n; i += 3) {
    const uint32_t v = (uint32_t{src[i]} << 16) | (uint32_t{src[i + 1]} << 8) | src[i + 2];
    const std::array<char, 2>& hi = kPairs[v >> 12];
    const std::array<char, 2>& lo = kPairs[v & 4095];
    dst[0] = hi[0];
    dst[1] = hi[1];
    dst[2] = lo[0];
    dst[3] = lo[1];
    dst += 4;
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
  auto bad_character = [&text, len]() {
    size_t i = 0;
    while (i < len && kDecode[static_cast<uint8_t>(text[i])] >= 0) ++i;
    return Error(ErrorCode::kInvalidArgument,
                 "invalid base64: unexpected character at offset " + std::to_string(i));
  };
  const size_t groups = len / 4;
  const size_t tail = len % 4;  // 0, 2 or 3 characters: 0, 1 or 2 more bytes
  std::string out;
  out.resize(groups * 3 + (tail == 0 ? 0 : tail - 1));
  auto* dst = reinterpret_cast<uint8_t*>(out.data());
  const auto* src = reinterpret_cast<const uint8_t*>(text.data());
  // Invalid characters map to -1 (all bits set), so OR-ing the four lookups flags any of them;
  // the exact offset is only searched for on that rare error path.
  for (size_t g = 0; g < groups; ++g, src += 4, dst += 3) {
    const int32_t a = kDecode[src[0]], b = kDecode[src[1]], c = kDecode[src[2]],
                  d = kDecode[src[3]];
    if ((a | b | c | d) < 0) return bad_character();
    const uint32_t v = (uint32_t(a) << 18) | (uint32_t(b) << 12) | (uint32_t(c) << 6) | uint32_t(d);
    dst[0] = static_cast<uint8_t>(v >> 16);
    dst[1] = static_cast<uint8_t>(v >> 8);
    dst[2] = static_cast<uint8_t>(v);
  }
  if (tail != 0) {
    uint32_t v = 0;
    for (size_t k = 0; k < tail; ++k) {
      const int32_t d = kDecode[src[k]];
      if (d < 0) return bad_character();
      v = (v << 6) | uint32_t(d);
    }
    v <<= 6 * (4 - tail);  // leftover low bits are ignored, as before
    dst[0] = static_cast<uint8_t>(v >> 16);
    if (tail == 3) dst[1] = static_cast<uint8_t>(v >> 8);
  }
  return out;
}

}  // namespace imgmcp
