// Codec benchmarks: decode, EncodePng, EncodeJpeg and MakePreview on 1024² and 2048² images with
// photo-like content (the local engine's picture plus film-grain noise, so it does not compress
// like a flat test card). Run: build/<dir>/bench/imaging/bench_imaging
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include "imaging/codec.h"
#include "local_backend/generator.h"

namespace imgmcp::imaging {
namespace {

Image MakeContent(int size) {
  Image img =
      local::GenerateImage("a harbour at dusk, teal and orange, boats and circles", size, size)
          .value()
          .image;
  uint32_t state = 12345;
  for (size_t i = 0; i < img.rgba.size(); i += 4) {
    state = state * 1664525u + 1013904223u;
    const int grain = static_cast<int>((state >> 24) % 25) - 12;
    for (int c = 0; c < 3; ++c) {
      img.rgba[i + c] = static_cast<uint8_t>(std::clamp(img.rgba[i + c] + grain, 0, 255));
    }
  }
  return img;
}

// Inputs are built once per size and shared by every benchmark (benchmarks run one at a time).
struct Inputs {
  Image image;
  std::string png;
  std::string jpeg;
};

const Inputs& InputsFor(int size) {
  static std::map<int, Inputs>* cache = new std::map<int, Inputs>();
  auto it = cache->find(size);
  if (it == cache->end()) {
    Inputs in;
    in.image = MakeContent(size);
    in.png = EncodePng(in.image).value();
    in.jpeg = EncodeJpeg(in.image, 90).value();
    it = cache->emplace(size, std::move(in)).first;
  }
  return it->second;
}

void SetPixels(benchmark::State& state, int size) {
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(size) * size);
}

void BM_DecodePng(benchmark::State& state) {
  const Inputs& in = InputsFor(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(Decode(in.png));
  state.counters["input_KB"] = in.png.size() / 1024.0;
  SetPixels(state, static_cast<int>(state.range(0)));
}

void BM_DecodeJpeg(benchmark::State& state) {
  const Inputs& in = InputsFor(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(Decode(in.jpeg));
  state.counters["input_KB"] = in.jpeg.size() / 1024.0;
  SetPixels(state, static_cast<int>(state.range(0)));
}

void BM_EncodePng(benchmark::State& state) {
  const Inputs& in = InputsFor(static_cast<int>(state.range(0)));
  const PngOptions options{static_cast<int>(state.range(1))};
  size_t bytes = 0;
  for (auto _ : state) {
    Result<std::string> png = EncodePng(in.image, options);
    bytes = png->size();
    benchmark::DoNotOptimize(png);
  }
  state.counters["output_KB"] = bytes / 1024.0;
  SetPixels(state, static_cast<int>(state.range(0)));
}

void BM_EncodeJpeg(benchmark::State& state) {
  const Inputs& in = InputsFor(static_cast<int>(state.range(0)));
  size_t bytes = 0;
  for (auto _ : state) {
    Result<std::string> jpeg = EncodeJpeg(in.image, 85);
    bytes = jpeg->size();
    benchmark::DoNotOptimize(jpeg);
  }
  state.counters["output_KB"] = bytes / 1024.0;
  SetPixels(state, static_cast<int>(state.range(0)));
}

void Preview(benchmark::State& state, const std::string& src) {
  size_t bytes = 0;
  for (auto _ : state) {
    Result<EncodedImage> p = MakePreview(src);  // defaults: 768 px, 600 KB
    bytes = p->bytes.size();
    benchmark::DoNotOptimize(p);
  }
  state.counters["output_KB"] = bytes / 1024.0;
  SetPixels(state, static_cast<int>(state.range(0)));
}

void BM_PreviewFromPng(benchmark::State& state) {
  Preview(state, InputsFor(static_cast<int>(state.range(0))).png);
}

void BM_PreviewFromJpeg(benchmark::State& state) {
  Preview(state, InputsFor(static_cast<int>(state.range(0))).jpeg);
}

void BM_Resize(benchmark::State& state) {
  const Inputs& in = InputsFor(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(Resize(in.image, 768, 768));
  SetPixels(state, static_cast<int>(state.range(0)));
}

BENCHMARK(BM_DecodePng)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeJpeg)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EncodePng)
    ->ArgsProduct({{1024, 2048}, {1, 4, 6}})
    ->ArgNames({"size", "level"})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EncodeJpeg)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Resize)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PreviewFromPng)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PreviewFromJpeg)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace imgmcp::imaging

BENCHMARK_MAIN();
