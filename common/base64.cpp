#include "common/base64.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

namespace imgmcp {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int16_t, 256> MakeDecodeTable() {
  std::array<int16_t, 256> table{};
  for (auto& v : table) v = -1;
  for (int i = 0; i < 64; ++i) table[static_cast<uint8_t>(kAlphabet[i])] = static_cast<int16_t>(i);
  table[static_cast<uint8_t>('-')] = 62;  // URL-safe alphabet
  table[static_cast<uint8_t>('_')] = 63;
  return table;
}
constexpr std::array<int16_t, 256> kDecode = MakeDecodeTable();

// Every 12-bit value as its two alphabet characters: half the lookups of a 6-bit table.
constexpr std::array<std::array<char, 2>, 4096> MakePairTable() {
  std::array<std::array<char, 2>, 4096> table{};
  for (int i = 0; i < 4096; ++i) table[i] = {kAlphabet[i >> 6], kAlphabet[i & 63]};
  return table;
}
constexpr std::array<std::array<char, 2>, 4096> kPairs = MakePairTable();

// The 8 bytes at `p` as one big-endian number.
uint64_t LoadBigEndian64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
  return v;
}

// The 8 characters of the two 3-byte groups in the top 48 bits of `v`.
void EncodeSixBytes(uint64_t v, char* dst) {
  std::memcpy(dst, kPairs[(v >> 52) & 4095].data(), 2);
  std::memcpy(dst + 2, kPairs[(v >> 40) & 4095].data(), 2);
  std::memcpy(dst + 4, kPairs[(v >> 28) & 4095].data(), 2);
  std::memcpy(dst + 6, kPairs[(v >> 16) & 4095].data(), 2);
}

// Encodes src[0, n), n a multiple of 3, at dst (4n/3 characters); returns the end. Four groups
// (12 bytes) per step from two unaligned 8-byte loads while 14 bytes are readable, then one
// group at a time.
char* EncodeGroups(const uint8_t* src, size_t n, char* dst) {
  const uint8_t* const end = src + n;
  for (; end - src >= 14; src += 12, dst += 16) {
    EncodeSixBytes(LoadBigEndian64(src), dst);
    EncodeSixBytes(LoadBigEndian64(src + 6), dst + 8);
  }
  for (; src < end; src += 3, dst += 4) {
    const uint32_t v = (uint32_t{src[0]} << 16) | (uint32_t{src[1]} << 8) | src[2];
    std::memcpy(dst, kPairs[v >> 12].data(), 2);
    std::memcpy(dst + 2, kPairs[v & 4095].data(), 2);
  }
  return dst;
}

}  // namespace

size_t Base64EncodedSize(size_t raw_size) { return (raw_size + 2) / 3 * 4; }

// Multi-megabyte images go through here on every full-size result and Gemini request, so the hot
// loop works on whole groups (3 bytes -> 4 characters). The output is written once: encoded into
// a small buffer that stays in the L1 cache, then appended to `out`, whose storage is reserved
// up front. (Resizing `out` first would zero-fill the megabytes, then overwrite them.)
void Base64EncodeAppend(std::string_view bytes, std::string& out) {
  out.reserve(out.size() + Base64EncodedSize(bytes.size()));
  constexpr size_t kChunkBytes = 12 * 1024;  // a multiple of 3: 16 KiB of characters
  char chunk[kChunkBytes / 3 * 4];
  const auto* src = reinterpret_cast<const uint8_t*>(bytes.data());
  const size_t whole = bytes.size() - bytes.size() % 3;
  for (size_t i = 0; i < whole; i += kChunkBytes) {
    const char* end = EncodeGroups(src + i, std::min(kChunkBytes, whole - i), chunk);
    out.append(chunk, static_cast<size_t>(end - chunk));
  }
  const size_t rest = bytes.size() - whole;
  if (rest == 0) return;
  uint32_t v = uint32_t{src[whole]} << 16;
  if (rest == 2) v |= uint32_t{src[whole + 1]} << 8;
  const char tail[4] = {kAlphabet[(v >> 18) & 63], kAlphabet[(v >> 12) & 63],
                        rest == 2 ? kAlphabet[(v >> 6) & 63] : '=', '='};
  out.append(tail, 4);
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

std::string Base64UrlEncode(std::string_view bytes) {
  std::string out = Base64Encode(bytes);
  for (char& c : out) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  while (!out.empty() && out.back() == '=') out.pop_back();
  return out;
}

}  // namespace imgmcp
