// Fuzzes gemini::ParseGenerateResponse: any HTTP status and body must give an image or a typed
// error, never a crash, and a returned image's MIME type must match its bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "gemini_client/wire_format.h"
#include "imaging/codec.h"

namespace {

// The statuses the parser distinguishes, plus a few it has never heard of.
constexpr int kStatuses[] = {200, 400, 401, 403, 404, 408, 429, 500, 502, 503, 504, 0, 302, 999};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const int status = kStatuses[data[0] % (sizeof(kStatuses) / sizeof(kStatuses[0]))];
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  imgmcp::gemini::ResponseInfo info;
  auto image = imgmcp::gemini::ParseGenerateResponse(status, body, &info);
  if (image.ok()) {
    // An image is only ever reported with the type its bytes have.
    const auto format = imgmcp::imaging::SniffFormat(image->bytes);
    if (image->mime_type != imgmcp::imaging::MimeTypeOf(format)) std::abort();
  } else if (image.error().message.empty()) {
    std::abort();  // every error says why
  }
  return 0;
}
