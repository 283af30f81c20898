// Micro-benchmarks of the per-call CPU work behind P1 (bench/RESULTS.md): a ~2.8 MB image
// arriving as a Gemini answer and leaving as one stdio line. Bytes are random (incompressible),
// like the harness's noise PNG, behind a PNG signature so the sniffing code accepts them.
#include <benchmark/benchmark.h>

#include <random>
#include <string>

#include "common/base64.h"
#include "common/json.h"
#include "common/sha256.h"
#include "gemini_client/wire_format.h"
#include "mcp/json_writer.h"

namespace {

constexpr size_t kImageBytes = 2'800'000;

const std::string& ImageBytes() {
  static const std::string bytes = [] {
    std::mt19937_64 rng(8);
    std::string b(kImageBytes, '\0');
    for (auto& c : b) c = static_cast<char>(rng());
    const char kPng[] = "\x89PNG\r\n\x1a\n";
    b.replace(0, 8, kPng, 8);
    return b;
  }();
  return bytes;
}

const std::string& GeminiBody() {
  static const std::string body =
      R"({"candidates":[{"content":{"role":"model","parts":[{"text":"Here you go"},)"
      R"({"inlineData":{"mimeType":"image/png","data":")" +
      imgmcp::Base64Encode(ImageBytes()) +
      R"("}}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":9},)"
      R"("modelVersion":"gemini-3.1-flash-lite-image","responseId":"abc"})";
  return body;
}

imgmcp::Json ToolResponse() {
  using imgmcp::Json;
  Json image = {
      {"type", "image"}, {"data", imgmcp::Base64Encode(ImageBytes())}, {"mimeType", "image/png"}};
  Json text = {{"type", "text"}, {"text", "Generated version 1 of session p (1024x912)"}};
  Json result = {{"content", Json::array({text, image})},
                 {"structuredContent", {{"session_id", "p"}, {"version", 1}}},
                 {"isError", false}};
  return {{"jsonrpc", "2.0"}, {"id", 7}, {"result", std::move(result)}};
}

void BM_ParseGeminiResponse(benchmark::State& state) {
  const std::string& body = GeminiBody();
  for (auto _ : state) {
    auto image = imgmcp::gemini::ParseGenerateResponse(200, body);
    if (!image.ok()) state.SkipWithError(image.error().message.c_str());
    benchmark::DoNotOptimize(image);
  }
  state.SetBytesProcessed(state.iterations() * body.size());
}
BENCHMARK(BM_ParseGeminiResponse)->Unit(benchmark::kMillisecond);

void BM_NlohmannParseBody(benchmark::State& state) {  // the cost the lifted parse avoids
  const std::string& body = GeminiBody();
  for (auto _ : state) benchmark::DoNotOptimize(imgmcp::Json::parse(body));
  state.SetBytesProcessed(state.iterations() * body.size());
}
BENCHMARK(BM_NlohmannParseBody)->Unit(benchmark::kMillisecond);

void BM_Base64Decode(benchmark::State& state) {
  const std::string text = imgmcp::Base64Encode(ImageBytes());
  for (auto _ : state) benchmark::DoNotOptimize(imgmcp::Base64Decode(text));
  state.SetBytesProcessed(state.iterations() * text.size());
}
BENCHMARK(BM_Base64Decode)->Unit(benchmark::kMillisecond);

void BM_Base64Encode(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(imgmcp::Base64Encode(ImageBytes()));
  state.SetBytesProcessed(state.iterations() * kImageBytes);
}
BENCHMARK(BM_Base64Encode)->Unit(benchmark::kMillisecond);

void BM_Sha256(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(imgmcp::Sha256Hex(ImageBytes()));
  state.SetBytesProcessed(state.iterations() * kImageBytes);
}
BENCHMARK(BM_Sha256)->Unit(benchmark::kMillisecond);

void BM_NlohmannDumpLine(benchmark::State& state) {  // what stdio_transport used to do
  const imgmcp::Json message = ToolResponse();
  for (auto _ : state) {
    benchmark::DoNotOptimize(message.dump(-1, ' ', false, imgmcp::Json::error_handler_t::replace));
  }
}
BENCHMARK(BM_NlohmannDumpLine)->Unit(benchmark::kMillisecond);

void BM_CompactJsonLine(benchmark::State& state) {
  const imgmcp::Json message = ToolResponse();
  for (auto _ : state) benchmark::DoNotOptimize(imgmcp::mcp::DumpCompactJson(message));
}
BENCHMARK(BM_CompactJsonLine)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
