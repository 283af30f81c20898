// Fuzzes tool-argument parsing end to end: the JSON arguments of the four image tools go through
// the tools as registered (typed argument parsing, the arrival-time turn reservation, then the
// handlers with ImageInputResolver: base64, paths, MIME sniffing, limits) against a real
// SessionStore in a temp dir. Generation returns a fixed 8x8 PNG and edits run the
// LocalBackend on small images, so the target stays fast. Generation parameters (model,
// image_size, aspect_ratio, thinking, search, context) go through the capability check, and
// context "chain" through the walk over the session's stored turns.
//
// Input: byte 0 picks the tool; the rest is the arguments' JSON text. Every call must give a
// result (an error result says why in a text block; a success carries structured content).
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/json.h"
#include "common/log.h"
#include "imaging/codec.h"
#include "local_backend/local_backend.h"
#include "mcp/tool_registry.h"
#include "server/tools/image_input.h"
#include "server/tools/image_tools.h"
#include "session/session_store.h"
#include "session/sqlite/sqlite_session_store.h"

namespace {

using imgmcp::Json;
namespace fs = std::filesystem;
namespace imaging = imgmcp::imaging;
namespace local = imgmcp::local;
namespace mcp = imgmcp::mcp;

std::string SmallPng(uint8_t shade) {
  imaging::Image image;
  image.width = 8;
  image.height = 8;
  image.rgba.assign(8 * 8 * 4, shade);
  auto png = imaging::EncodePng(image);
  if (!png.ok()) std::abort();
  return *png;
}

// Generation is not what is being fuzzed here: a fixed tiny image keeps every call cheap.
class TinyBackend final : public imaging::ImageBackend {
 public:
  explicit TinyBackend(local::LocalBackendOptions options) : local_(options) {}
  std::string Name() const override { return "local"; }
  std::string Model() const override { return "tiny"; }
  // The local engine's row under this backend's model id, with conversational edits on, so that
  // context "chain" walks the session's stored turns (Generate leaves replay data).
  const std::vector<imaging::ModelCapabilities>& Models() const override {
    static const std::vector<imaging::ModelCapabilities> kModels = [] {
      imaging::ModelCapabilities m = local::LocalBackend().Models().front();
      m.id = "tiny";
      m.chain = imaging::Support::kYes;
      m.input_token_limit = 65'536;
      m.input_image_tokens = 560;
      return std::vector<imaging::ModelCapabilities>{m};
    }();
    return kModels;
  }
  imgmcp::Result<imaging::BackendImage> Generate(const imaging::GenerateRequest& request,
                                                 const imaging::CallContext& ctx) override {
    imaging::BackendImage image;
    image.bytes = SmallPng(static_cast<uint8_t>(request.prompt.size()));
    image.mime_type = "image/png";
    image.replay = kReplay;
    return image;
  }
  // Edits leave replay data too, so a chain walks back over several turns.
  imgmcp::Result<imaging::BackendImage> Edit(const imaging::EditRequest& request,
                                             const imaging::CallContext& ctx) override {
    auto image = local_.Edit(request, ctx);
    if (image.ok()) image->replay = kReplay;
    return image;
  }

 private:
  static constexpr const char* kReplay =
      R"({"parts":[{"inlineData":{"mimeType":"image/png"}}],"image":0})";
  local::LocalBackend local_;
};

class FuzzContext final : public mcp::ToolCallContext {
 public:
  explicit FuzzContext(std::unique_ptr<mcp::CallReservation> reservation)
      : reservation_(std::move(reservation)) {}
  bool HasProgressToken() const override { return false; }
  void ReportProgress(double, std::optional<double>, const std::string&) override {}
  void Log(mcp::LogLevel, const std::string&, const Json&) override {}
  std::stop_token Cancellation() const override { return token_.get_token(); }
  std::string ProtocolVersion() const override { return "2025-11-25"; }
  imgmcp::Result<Json> SendRequest(const std::string&, const Json&) override {
    return imgmcp::MakeError(imgmcp::ErrorCode::kUnsupported, "no client");
  }
  std::unique_ptr<mcp::CallReservation> TakeReservation() override {
    return std::move(reservation_);
  }

 private:
  std::stop_source token_;
  std::unique_ptr<mcp::CallReservation> reservation_;
};

struct Fixture {
  fs::path dir;
  imgmcp::SystemClock clock;
  std::unique_ptr<imgmcp::session::SessionStore> store;
  std::unique_ptr<TinyBackend> backend;
  std::unique_ptr<imgmcp::tools::ImageInputResolver> inputs;
  std::unique_ptr<imgmcp::tools::ImageTools> tools;
  std::vector<mcp::ToolSpec> specs;  // generate_image, edit_image, get_image, reset_session

  Fixture() {
    imgmcp::log::SetMinLevel(imgmcp::log::Level::kOff);
    const char* base = std::getenv("TMPDIR");
    std::string templ =
        std::string(base != nullptr && *base ? base : "/tmp") + "/imgmcp-fuzz-XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) std::abort();
    dir = templ;
    // An allowed root with one image, one non-image and a symlink leading out of it; the fuzzer
    // finds these names in the seed corpus.
    fs::create_directories(dir / "allowed");
    std::ofstream(dir / "allowed" / "in.png", std::ios::binary) << SmallPng(7);
    std::ofstream(dir / "allowed" / "note.txt") << "not an image";
    std::ofstream(dir / "secret.png", std::ios::binary) << SmallPng(9);
    fs::create_symlink(dir / "secret.png", dir / "allowed" / "out.png");
    // Relative paths in inputs ("in.png", "../secret.png") resolve against the allowed root. (So
    // pass libFuzzer absolute corpus and artifact paths, as run_fuzzer.cmake does.)
    fs::current_path(dir / "allowed");

    imgmcp::session::StoreOptions store_options;
    store_options.data_dir = dir / "data";
    store_options.max_versions_per_session = 3;
    store_options.cache_bytes = 1 << 20;
    auto opened = imgmcp::session::sqlite::OpenSessionStore(store_options, clock);
    if (!opened.ok()) std::abort();
    store = std::move(*opened);

    local::LocalBackendOptions local;
    local.limits.max_pixels = 256 * 256;
    local.limits.max_bytes = 256 * 1024;
    backend = std::make_unique<TinyBackend>(local);
    imgmcp::tools::ImageInputOptions input_options;
    input_options.allowed_roots = {dir / "allowed"};
    input_options.limits = local.limits;
    input_options.max_reference_images = 3;
    inputs = std::make_unique<imgmcp::tools::ImageInputResolver>(input_options);
    imgmcp::tools::ImageToolsOptions tool_options;
    tool_options.limits = local.limits;
    tool_options.preview.max_edge = 16;
    tool_options.preview.max_bytes = 8 * 1024;
    tool_options.max_prompt_bytes = 4096;
    tool_options.heartbeat_interval = std::chrono::milliseconds(1000);
    tools = std::make_unique<imgmcp::tools::ImageTools>(*store, *backend, *inputs, nullptr,
                                                        tool_options);
    specs = tools->Tools();
    if (specs.size() != 4 || specs[0].definition.name != "generate_image") std::abort();
    // A session with two versions for get/edit/reset to find.
    Json seed = {{"session_id", "s1"}, {"prompt", "solid red"}, {"inline", "none"}};
    for (int i = 0; i < 2; ++i) {
      if (Call(0, seed).is_error) std::abort();
    }
    // And one with a generation and two edits, for context "chain" to walk back over (the seeds
    // that reset s1 run first, libFuzzer starting with the smallest inputs).
    Json chain = {{"session_id", "c1"}, {"prompt", "solid blue"}, {"inline", "none"}};
    if (Call(0, chain).is_error) std::abort();
    chain["prompt"] = "invert";
    if (Call(1, chain).is_error) std::abort();
    chain["context"] = "chain";
    mcp::ToolResult chained = Call(1, chain);
    if (chained.is_error || !chained.structured_content ||
        chained.structured_content->value("params", Json::object())
                .value("replayed_versions", Json()) != Json::array({1, 2})) {
      std::abort();  // the walk must find both earlier turns
    }
  }

  // One call as the protocol core makes it: admitted on arrival, then run.
  mcp::ToolResult Call(int which, Json arguments) {
    mcp::AdmittedCall call = specs[which].admit(std::move(arguments), mcp::Caller{});
    FuzzContext ctx(std::move(call.reservation));
    return call.run(ctx);
  }
  ~Fixture() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture fixture;  // destroyed at exit: removes the temp dir
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  Json arguments = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (arguments.is_discarded()) return 0;

  mcp::ToolResult result = fixture.Call(data[0] % 4, std::move(arguments));
  if (result.is_error) {
    if (!result.content.is_array() || result.content.empty() ||
        !result.content[0].contains("text") ||
        result.content[0]["text"].get<std::string>().empty()) {
      std::abort();
    }
  } else if (!result.structured_content || !result.structured_content->contains("session_id")) {
    std::abort();
  }
  const Json wire = mcp::ToolResultToJson(std::move(result));
  (void)wire.dump(-1, ' ', false, Json::error_handler_t::replace);
  return 0;
}
