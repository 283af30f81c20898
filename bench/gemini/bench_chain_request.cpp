// What a `context: "chain"` edit costs imgmcp before anything is sent: BuildEditRequest with N
// replayed 2K turns (each: the instruction, the model's parts with their thoughtSignatures, and
// the turn's 2048x2048 PNG as base64; the first turn also sent its base image), next to a plain
// single-turn edit of the same 2K image. The images are the local engine's pictures with
// film-grain noise, so they are photo-sized (several MB), not flat test cards.
// Run: build/<dir>/bench/gemini/bench_chain_request
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/base64.h"
#include "common/json.h"
#include "gemini_client/models.h"
#include "gemini_client/wire_format.h"
#include "imaging/codec.h"
#include "local_backend/generator.h"

namespace imgmcp::gemini {
namespace {

std::string NoisyPng(int size, uint32_t seed) {
  imaging::Image img =
      local::GenerateImage("a harbour at dusk, teal and orange, boats " + std::to_string(seed),
                           size, size)
          .value()
          .image;
  uint32_t state = seed * 2654435761u + 1;
  for (size_t i = 0; i < img.rgba.size(); i += 4) {
    state = state * 1664525u + 1013904223u;
    const int grain = static_cast<int>((state >> 24) % 25) - 12;
    for (int c = 0; c < 3; ++c) {
      img.rgba[i + c] = static_cast<uint8_t>(std::clamp(img.rgba[i + c] + grain, 0, 255));
    }
  }
  return imaging::EncodePng(img).value();
}

// The replay data ParseGenerateResponse keeps for one answer: a thought part, a signed text part
// and the signed image part without its data.
std::string Replay(int turn) {
  const std::string signature = Base64Encode(std::string(48, static_cast<char>('a' + turn)));
  Json parts = Json::array();
  parts.push_back({{"text", "**Planning** step " + std::to_string(turn)}, {"thought", true}});
  parts.push_back({{"text", "Here is the edited image."}, {"thoughtSignature", signature}});
  parts.push_back({{"inlineData", {{"mimeType", "image/png"}}}, {"thoughtSignature", signature}});
  return Json{{"parts", parts}, {"image", 2}}.dump();
}

struct Fixture {
  std::vector<std::string> images;  // turn i's answer; images[0] is also turn 1's base
  std::string base;
  size_t bytes = 0;
};

const Fixture& Inputs() {
  static const Fixture* fixture = [] {
    auto* f = new Fixture;
    for (uint32_t i = 0; i < 5; ++i) f->images.push_back(NoisyPng(2048, i + 1));
    f->base = f->images.back();
    return f;
  }();
  return *fixture;
}

const imaging::ModelCapabilities& Model() {
  return *imaging::FindModel(BuiltInGeminiModels(), "gemini-3.1-flash-image");
}

void BM_ChainEditRequest(benchmark::State& state) {
  const Fixture& in = Inputs();
  const int turns = static_cast<int>(state.range(0));
  imaging::EditRequest request;
  request.prompt = "make the sky a stormy purple; keep everything else identical";
  request.options.image_size = "2K";
  for (int t = 0; t < turns; ++t) {
    imaging::ChainTurn turn;
    turn.user_text = "edit number " + std::to_string(t + 1);
    if (t == 0) turn.user_image = imaging::EncodedImage{in.images[4], "image/png"};
    turn.replay = Replay(t);
    turn.image = imaging::EncodedImage{in.images[t], "image/png"};
    request.chain.push_back(std::move(turn));
  }
  request.base = request.chain.empty() ? imaging::EncodedImage{in.base, "image/png"}
                                       : request.chain.back().image;
  size_t body_bytes = 0;
  size_t image_bytes = 0;
  for (const auto& t : request.chain) {
    image_bytes += t.image.bytes.size() + (t.user_image ? t.user_image->bytes.size() : 0);
  }
  if (request.chain.empty()) image_bytes = request.base.bytes.size();
  for (auto _ : state) {
    Result<std::string> body = BuildEditRequest(request, Model());
    if (!body.ok()) {
      state.SkipWithError(body.error().message.c_str());
      break;
    }
    body_bytes = body->size();
    benchmark::DoNotOptimize(body->data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body_bytes));
  state.counters["images_MB"] = image_bytes / 1e6;
  state.counters["body_MB"] = body_bytes / 1e6;
}
// 0 = a plain single-turn edit of one 2K image (context "image"); 4 = the default --chain-turns.
BENCHMARK(BM_ChainEditRequest)->Arg(0)->Arg(1)->Arg(4)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace imgmcp::gemini

BENCHMARK_MAIN();
