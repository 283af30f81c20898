#include "tests/fake_gemini/fake_gemini_server.h"

#include <httplib.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "common/log.h"
#include "imaging/codec.h"
#include "local_backend/local_backend.h"
#include "tests/fake_gemini/fake_wire.h"

namespace imgmcp::fake_gemini {
namespace {

constexpr size_t kMaxBody = 256u * 1024 * 1024;

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(ErrorCode::kNotFound, "cannot read image file " + path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// A small flat PNG used for thought (draft) image parts.
std::string DraftPng() {
  imaging::Image image;
  image.width = 64;
  image.height = 64;
  image.rgba.assign(64 * 64 * 4, 0);
  for (size_t i = 0; i < image.rgba.size(); i += 4) {
    image.rgba[i] = 255;  // magenta
    image.rgba[i + 2] = 255;
    image.rgba[i + 3] = 255;
  }
  auto png = imaging::EncodePng(image);
  return png.ok() ? std::move(png).value() : std::string();
}

// The request's headers as "Name: value" items joined by `separator` (httplib's own
// LOCAL_ADDR/REMOTE_ADDR entries left out): what a proxy or an echo server might send back.
std::string EchoedHeaders(const httplib::Request& req, const char* separator) {
  std::string out;
  for (const auto& [name, value] : req.headers) {
    if (name.rfind("LOCAL_", 0) == 0 || name.rfind("REMOTE_", 0) == 0) continue;
    if (!out.empty()) out += separator;
    out += name + ": " + value;
  }
  return out;
}

// A 200 answer of exactly `size` bytes (at least its skeleton's): one text part padded with 'x',
// produced piece by piece so that a test of a huge answer costs the fake no memory.
void SendPaddedAnswer(httplib::Response& res, size_t size, bool chunked) {
  static const std::string head = R"({"candidates":[{"content":{"role":"model","parts":[{"text":")";
  static const std::string tail = R"("}]},"finishReason":"STOP","index":0}]})";
  static const std::string pad(64 * 1024, 'x');
  const size_t total = std::max(size, head.size() + tail.size());
  const size_t tail_at = total - tail.size();
  // Writes the bytes from `offset` up to the next piece boundary; false at the end.
  auto write_piece = [=](size_t offset, httplib::DataSink& sink) {
    if (offset >= total) return false;
    if (offset < head.size()) return sink.write(head.data() + offset, head.size() - offset);
    if (offset >= tail_at) return sink.write(tail.data() + offset - tail_at, total - offset);
    return sink.write(pad.data(), std::min(pad.size(), tail_at - offset));
  };
  res.status = 200;
  if (!chunked) {
    res.set_content_provider(total, kJson,
                             [write_piece](size_t offset, size_t, httplib::DataSink& sink) {
                               return write_piece(offset, sink);
                             });
    return;
  }
  res.set_chunked_content_provider(kJson,
                                   [write_piece, total](size_t offset, httplib::DataSink& sink) {
                                     if (offset >= total) {
                                       sink.done();
                                       return true;
                                     }
                                     return write_piece(offset, sink);
                                   });
}

Json ErrorDetails(const Action& a) {
  Json details = Json::array();
  if (!a.reason.empty()) {
    details.push_back({{"@type", "type.googleapis.com/google.rpc.ErrorInfo"},
                       {"reason", a.reason},
                       {"domain", "googleapis.com"},
                       {"metadata", {{"service", "generativelanguage.googleapis.com"}}}});
  }
  if (!a.quota_id.empty()) {
    Json violation = {
        {"quotaMetric", "generativelanguage.googleapis.com/generate_content_requests"},
        {"quotaId", a.quota_id}};
    Json failure = {{"@type", "type.googleapis.com/google.rpc.QuotaFailure"}};
    failure["violations"] = Json::array({std::move(violation)});
    details.push_back(std::move(failure));
  }
  if (!a.retry_delay.empty()) {
    details.push_back(
        {{"@type", "type.googleapis.com/google.rpc.RetryInfo"}, {"retryDelay", a.retry_delay}});
  }
  return details;
}

}  // namespace

FakeGeminiServer::FakeGeminiServer(FakeGeminiOptions options)
    : initial_options_(options), options_(std::move(options)) {}

FakeGeminiServer::~FakeGeminiServer() { Stop(); }

std::string FakeGeminiServer::base_url() const {
  const bool tls = !initial_options_.tls_cert_file.empty();
  return (tls ? "https://" : "http://") + host_ + ":" + std::to_string(port_);
}

Result<int> FakeGeminiServer::Start(const std::string& host, int port) {
  if (server_ != nullptr) return MakeError(ErrorCode::kFailedPrecondition, "already started");
  const bool tls = !initial_options_.tls_cert_file.empty();
  if (tls) {
    auto ssl = std::make_unique<httplib::SSLServer>(initial_options_.tls_cert_file.c_str(),
                                                    initial_options_.tls_key_file.c_str());
    if (!ssl->is_valid()) {
      return MakeError(ErrorCode::kInvalidArgument, "cannot load the TLS certificate or key");
    }
    server_ = std::move(ssl);
  } else {
    server_ = std::make_unique<httplib::Server>();
  }
  server_->set_payload_max_length(kMaxBody);
  server_->set_read_timeout(std::chrono::seconds(60));
  server_->set_write_timeout(std::chrono::seconds(60));
  server_->set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown exception";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        res.status = 500;
        res.set_content(ErrorBody(500, "fake_gemini internal error: " + what, "INTERNAL"), kJson);
      });
  const std::string rpc_pattern =
      R"(/(v1|v1beta|v1alpha)/models/([^/:]+):(generateContent|streamGenerateContent))";
  server_->Post(rpc_pattern, [this](const httplib::Request& req, httplib::Response& res) {
    Route route;
    route.version = req.matches[1];
    route.model = req.matches[2];
    route.rpc = req.matches[3];
    HandleGenerate(req, res, route);
  });
  const std::string vertex_pattern =
      R"(/v1/projects/([^/]+)/locations/([^/]+)/publishers/google/models/([^/:]+):)"
      R"((generateContent|streamGenerateContent))";
  server_->Post(vertex_pattern, [this](const httplib::Request& req, httplib::Response& res) {
    Route route{"vertex", "v1", req.matches[3], req.matches[4], req.matches[1], req.matches[2]};
    HandleGenerate(req, res, route);
  });
  const std::string express_pattern =
      R"(/v1/publishers/google/models/([^/:]+):(generateContent|streamGenerateContent))";
  server_->Post(express_pattern, [this](const httplib::Request& req, httplib::Response& res) {
    Route route{"vertex", "v1", req.matches[1], req.matches[2], "", ""};
    route.express = true;
    HandleGenerate(req, res, route);
  });
  RegisterOAuthRoutes();
  RegisterBatchRoutes();
  auto control = [this](const httplib::Request& req, httplib::Response& res) {
    HandleControl(req, res);
  };
  server_->Post("/_fake/(script|reset|config|release)", control);
  server_->Get("/_fake/(requests|wait|batches)", control);
  // A held call or a waiting test keeps its worker thread; cpp-httplib's default pool (8 on a
  // small machine) would let a few of them stall every other request.
  server_->new_task_queue = [] { return new httplib::ThreadPool(64); };

  int bound =
      port == 0 ? server_->bind_to_any_port(host) : (server_->bind_to_port(host, port) ? port : -1);
  oauth_.SetTokenUri(std::string(tls ? "https://" : "http://") + host + ":" +
                     std::to_string(bound) + "/token");
  if (bound <= 0) {
    server_.reset();
    return MakeError(ErrorCode::kUnavailable,
                     "fake_gemini could not listen on " + host + ":" + std::to_string(port));
  }
  host_ = host;
  port_ = bound;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // httplib's stop() is a no-op until the accept loop runs, so Start returns only once it does.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!server_->is_running() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return bound;
}

void FakeGeminiServer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (server_ != nullptr) server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

Status FakeGeminiServer::PushScript(const Json& actions) {
  auto parsed = ParseScript(actions);
  if (!parsed.ok()) return parsed.error();
  std::lock_guard<std::mutex> lock(mutex_);
  for (Action& a : *parsed) script_.push_back(std::move(a));
  return Status::Ok();
}

void FakeGeminiServer::RegisterOAuthRoutes() {
  auto reply = [](httplib::Response& res, std::pair<int, std::string> answer) {
    res.status = answer.first;
    res.set_content(answer.second, kJson);
  };
  // A token request waits at the configured gate, if any (a hanging token endpoint). False when
  // a reset or Stop() let it go: it belongs to an earlier test and is answered 503, unlogged.
  auto hold = [this, reply](httplib::Response& res) {
    const std::string gate = oauth_.HoldGate();
    if (gate.empty()) return true;
    uint64_t epoch;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      epoch = log_epoch_;
    }
    Hold(gate, epoch);
    std::lock_guard<std::mutex> lock(mutex_);
    if (log_epoch_ == epoch && !stopping_) return true;
    reply(res, {503, R"({"error":"unavailable"})"});
    return false;
  };
  server_->Post("/token", [this, reply, hold](const httplib::Request& req, httplib::Response& res) {
    if (hold(res)) reply(res, oauth_.HandleToken(req.body));
  });
  server_->Get("/computeMetadata/v1/instance/service-accounts/default/token",
               [this, reply, hold](const httplib::Request& req, httplib::Response& res) {
                 if (!hold(res)) return;
                 reply(res,
                       oauth_.HandleMetadata(req.get_header_value("Metadata-Flavor") == "Google"));
               });
  server_->Post("/_fake/oauth", [this, reply](const httplib::Request& req, httplib::Response& res) {
    const Json body = Json::parse(req.body, nullptr, false);
    const Status s = oauth_.Configure(body);
    reply(res, s.ok()
                   ? std::pair<int, std::string>{200, R"({"ok":true})"}
                   : std::pair<int, std::string>{400, Json({{"error", s.error().message}}).dump()});
  });
  server_->Post("/_fake/expire_tokens",
                [this, reply](const httplib::Request&, httplib::Response& res) {
                  oauth_.ExpireTokens();
                  reply(res, {200, R"({"ok":true})"});
                });
  server_->Get("/_fake/token_requests",
               [this, reply](const httplib::Request&, httplib::Response& res) {
                 reply(res, {200, oauth_.TokenRequests().dump()});
               });
}

void FakeGeminiServer::Reset() {
  oauth_.Reset();
  batches_.Clear();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    script_.clear();
    log_.clear();
    ++log_epoch_;  // lets go of the calls held before the reset
    open_gates_.clear();
    options_ = initial_options_;
  }
  changed_.notify_all();
}

void FakeGeminiServer::Release(const std::string& gate) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    open_gates_.insert(gate);
  }
  changed_.notify_all();
}

Status FakeGeminiServer::Configure(const Json& config) {
  if (!config.is_object()) {
    return MakeError(ErrorCode::kInvalidArgument, "config must be a JSON object");
  }
  FakeGeminiOptions next;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    next = options_;
  }
  for (const auto& [key, value] : config.items()) {
    if (key == "latency_ms" && value.is_number_integer() && value.get<int64_t>() >= 0) {
      next.latency = std::chrono::milliseconds(value.get<int64_t>());
    } else if (key == "fixed_image_file" && value.is_string()) {
      next.fixed_image_file = value.get<std::string>();
    } else if (key == "invalid_key" && value.is_string()) {
      next.invalid_key = value.get<std::string>();
    } else if (key == "batch_states") {
      ASSIGN_OR_RETURN(next.batch_states, ParseBatchSchedule(value));
    } else if (key == "serve_as" && value.is_object() &&
               std::all_of(value.begin(), value.end(), [](const Json& v) {
                 return v.is_string() && IsKnownModel(v.get_ref<const std::string&>());
               })) {
      next.serve_as.clear();
      for (const auto& [id, known] : value.items()) next.serve_as[id] = known.get<std::string>();
    } else {
      return MakeError(ErrorCode::kInvalidArgument,
                       "config field \"" + key +
                           "\" is unknown or has the wrong type (latency_ms: integer ≥ 0, "
                           "fixed_image_file: string, invalid_key: string, serve_as: {id: a "
                           "model the fake knows}, batch_states: [state, …])");
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  options_ = std::move(next);
  return Status::Ok();
}

Json FakeGeminiServer::Requests() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return Json(log_);
}

size_t FakeGeminiServer::RequestCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return log_.size();
}

size_t FakeGeminiServer::PendingActions() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return script_.size();
}

size_t FakeGeminiServer::HeldCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return held_;
}

bool FakeGeminiServer::WaitForRequests(size_t count, std::chrono::milliseconds timeout) const {
  return WaitFor(count, 0, timeout);
}

bool FakeGeminiServer::WaitFor(size_t requests, size_t held,
                               std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mutex_);
  auto reached = [&] { return log_.size() >= requests && held_ >= held; };
  changed_.wait_for(lock, timeout, [&] { return reached() || stopping_; });
  return reached();
}

void FakeGeminiServer::Hold(const std::string& gate, uint64_t epoch) {
  std::unique_lock<std::mutex> lock(mutex_);
  ++held_;
  changed_.notify_all();
  changed_.wait(lock,
                [&] { return open_gates_.count(gate) > 0 || log_epoch_ != epoch || stopping_; });
  --held_;
  changed_.notify_all();
}

void FakeGeminiServer::Pause(std::chrono::milliseconds d) {
  if (d <= std::chrono::milliseconds(0)) return;
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait_for(lock, d, [&] { return stopping_; });
}

void FakeGeminiServer::SetStatus(LogSlot slot, int status) {
  Annotate(slot, {{"response_status", status}});
}

void FakeGeminiServer::Annotate(LogSlot slot, const Json& fields) {
  std::lock_guard<std::mutex> lock(mutex_);
  AnnotateLocked(slot, fields);
}

void FakeGeminiServer::AnnotateLocked(LogSlot slot, const Json& fields) {
  // A reset since the request arrived cleared its entry: the slot names nothing now.
  if (slot.epoch != log_epoch_ || slot.index >= log_.size()) return;
  for (const auto& [key, value] : fields.items()) log_[slot.index][key] = value;
}

void FakeGeminiServer::HandleControl(const httplib::Request& req, httplib::Response& res) {
  auto reply = [&](int status, const Json& body) {
    res.status = status;
    res.set_content(body.dump(), kJson);
  };
  const std::string& what = req.matches[1];
  if (what == "requests") return reply(200, Requests());
  if (what == "batches") return reply(200, batches_.List());
  if (what == "wait") {
    size_t counts[3] = {0, 0, 20000};  // requests, held, timeout_ms
    const char* names[3] = {"requests", "held", "timeout_ms"};
    for (int i = 0; i < 3; ++i) {
      if (!req.has_param(names[i])) continue;
      const std::string v = req.get_param_value(names[i]);
      if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) {
        return reply(400, {{"error", std::string(names[i]) + " must be a non-negative integer"}});
      }
      counts[i] = std::stoul(v);
    }
    const bool reached = WaitFor(counts[0], counts[1], std::chrono::milliseconds(counts[2]));
    Json state;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      state = {{"requests", log_.size()}, {"held", held_}};
    }
    return reply(reached ? 200 : 408, state);
  }
  if (what == "reset") {
    Reset();
    return reply(200, {{"ok", true}});
  }
  Json body = Json::parse(req.body, nullptr, false);
  if (body.is_discarded()) return reply(400, {{"error", "body is not valid JSON"}});
  if (what == "release") {
    if (!body.is_object() || !body.contains("gate") || !body["gate"].is_string() ||
        body["gate"].get<std::string>().empty() || body.size() != 1) {
      return reply(400, {{"error", "release takes {\"gate\": NAME}, NAME a non-empty string"}});
    }
    Release(body["gate"].get<std::string>());
    return reply(200, {{"ok", true}});
  }
  Status s = what == "script" ? PushScript(body) : Configure(body);
  if (!s.ok()) return reply(400, {{"error", s.error().message}});
  return reply(200, {{"ok", true}, {"pending", PendingActions()}});
}

FakeGeminiServer::Answer FakeGeminiServer::AnswerRequest(const std::string& model,
                                                         const std::string& request_body,
                                                         const Action& action,
                                                         const FakeGeminiOptions& options,
                                                         LogSlot index) {
  auto error = [](int status, const std::string& message, const std::string& api_status,
                  const Json& details = Json()) {
    return Answer{status, ErrorBody(status, message, api_status, details)};
  };
  if (action.status != 0 && action.status != 200) {
    std::string message =
        action.message.empty() ? DefaultErrorMessage(action.status) : action.message;
    if (action.status == 429 && !action.retry_delay.empty() && action.message.empty()) {
      message += " Please retry in " + action.retry_delay + ".";
    }
    return error(action.status, message,
                 action.api_status.empty() ? DefaultApiStatus(action.status) : action.api_status,
                 ErrorDetails(action));
  }
  std::string signature_problem;
  auto parsed = ParseRequest(request_body, model, &signature_problem);
  if (!parsed.ok()) {
    if (!signature_problem.empty()) Annotate(index, {{"signature_problem", signature_problem}});
    return error(400, parsed.error().message, "INVALID_ARGUMENT");
  }
  Annotate(
      index,
      {{"body", parsed->logged_body}, {"images", parsed->image_log}, {"turns", parsed->turns}});

  ResponseSpec spec;
  spec.model = model;
  spec.prompt_text_tokens = static_cast<int>(parsed->prompt.size() / 4 + 1);
  spec.prompt_image_tokens = InputImageTokens() * static_cast<int>(parsed->image_log.size());
  spec.image_tokens = ImageTokens(model, parsed->image_size);
  spec.thoughts_tokens = ThoughtTokens(model, parsed->thinking_level);
  // Thinking shows as a leading thought part: always on 3 Pro, and with thinkingLevel HIGH.
  const bool thinks = AlwaysThinks(model) || parsed->thinking_level == "HIGH";
  spec.thought_parts = std::max(action.thought_parts, thinks ? 1 : 0);
  if (parsed->search) spec.grounding_query = parsed->prompt;
  if (spec.thought_parts > 1) spec.draft_png = DraftPng();
  std::string image;

  if (!action.block_reason.empty()) {
    spec.block_reason = action.block_reason;
  } else if (!action.finish_reason.empty() && action.finish_reason != "STOP") {
    spec.finish_reason = action.finish_reason;
    spec.finish_message = action.finish_message;
  } else if (action.text_only) {
    spec.text = *action.text_only;
  } else {
    const std::string fixed =
        !action.fixed_image_file.empty() ? action.fixed_image_file : options.fixed_image_file;
    std::string failure;
    if (!fixed.empty()) {
      auto bytes = ReadFile(fixed);
      if (!bytes.ok()) return error(500, bytes.error().message, "INTERNAL");
      image = std::move(bytes).value();
    } else {
      local::LocalBackend engine;
      imaging::CallContext ctx;
      Result<imaging::BackendImage> made = Error();
      if (parsed->images.empty()) {
        imaging::GenerateRequest g;
        g.prompt = parsed->prompt;
        g.options.aspect_ratio = parsed->aspect_ratio;
        g.options.image_size = parsed->image_size;
        made = engine.Generate(g, ctx);
      } else {
        imaging::EditRequest e;
        e.prompt = parsed->prompt;
        e.options.image_size = parsed->image_size;
        e.base = parsed->images.front();
        e.references.assign(parsed->images.begin() + 1, parsed->images.end());
        made = engine.Edit(e, ctx);
      }
      if (made.ok()) {
        image = std::move(made->bytes);
      } else {
        failure = made.error().message;
      }
    }
    if (!failure.empty()) {
      // What the real model does with an instruction it will not follow: text, no image.
      spec.text = "I can't make that image: " + failure;
    } else {
      spec.image_label = imaging::MimeTypeOf(imaging::SniffFormat(image));
      if (action.jpeg_labelled_png) {
        auto pixels = imaging::Decode(image);
        if (!pixels.ok()) return error(500, pixels.error().message, "INTERNAL");
        auto jpeg = imaging::EncodeJpeg(*pixels, 90);
        if (!jpeg.ok()) return error(500, jpeg.error().message, "INTERNAL");
        image = std::move(jpeg).value();
        spec.image_label = "image/png";  // the wrong label is the point
      }
      spec.image = &image;
      if (parsed->want_text) spec.text = "Here is the image you asked for.";
    }
  }

  return Answer{200, BuildResponse(spec)};
}

void FakeGeminiServer::HandleGenerate(const httplib::Request& req, httplib::Response& res,
                                      const Route& route) {
  const std::string& version = route.version;
  std::string model = route.model;  // whose rules apply: a serve_as id's known model
  const std::string& rpc = route.rpc;
  const bool bearer_route = route.api == "vertex" && !route.express;
  const std::string authorization = req.get_header_value("Authorization");
  const bool bearer_present = authorization.rfind("Bearer ", 0) == 0;
  const bool bearer_valid = bearer_present && oauth_.Valid(authorization.substr(7));
  const bool stream = rpc == "streamGenerateContent";
  const bool sse = stream && req.get_param_value("alt") == "sse";

  std::string key;
  std::string key_source;
  if (req.has_header("x-goog-api-key")) {
    key = req.get_header_value("x-goog-api-key");
    key_source = "header";
  } else if (req.has_param("key")) {
    key = req.get_param_value("key");
    key_source = "query";
  }
  Json headers = Json::object();
  for (const auto& [name, value] : req.headers) {
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    headers[lower] = value;
  }
  Json entry = {{"method", req.method},
                {"path", req.path},
                {"target", req.target},
                {"api_version", version},
                {"model", model},
                {"rpc", rpc},
                {"api_key_present", !key.empty()},
                {"api_key", key},
                {"api_key_source", key_source},
                {"api", route.api},
                {"project", route.project},
                {"location", route.location},
                {"bearer_present", bearer_present},
                {"bearer_valid", bearer_valid},
                {"headers", std::move(headers)},
                {"body_bytes", req.body.size()},
                {"body", nullptr},
                {"images", Json::array()},
                {"action", nullptr},
                {"response_status", nullptr}};
  LogSlot index;
  FakeGeminiOptions options;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    log_.push_back(std::move(entry));
    index = LogSlot{log_epoch_, log_.size() - 1};
    options = options_;
  }
  changed_.notify_all();
  if (auto as = options.serve_as.find(model); as != options.serve_as.end()) model = as->second;

  auto send = [&](int status, std::string body, const char* content_type) {
    res.status = status;
    if (sse && status == 200) {
      res.set_content("data: " + body + "\r\n\r\n", "text/event-stream");
    } else if (stream && status == 200) {
      res.set_content("[" + body + "]", kJson);
    } else {
      res.set_content(std::move(body), content_type);
    }
    SetStatus(index, status);
  };
  auto send_error = [&](int status, const std::string& message, const std::string& api_status,
                        const Json& details = Json()) {
    send(status, ErrorBody(status, message, api_status, details), kJson);
  };

  if (bearer_route && !bearer_valid) {
    return send_error(401,
                      "Request had invalid authentication credentials. Expected OAuth 2 access "
                      "token, login cookie or other valid authentication credential.",
                      "UNAUTHENTICATED");
  }
  if (key.empty() && !bearer_route) {
    return send_error(403,
                      "Method doesn't allow unregistered callers (callers without established "
                      "identity). Please use API Key or other form of API consumer identity to "
                      "call this API.",
                      "PERMISSION_DENIED");
  }
  if (!bearer_route && key == options.invalid_key) {
    Json details = Json::array({{{"@type", "type.googleapis.com/google.rpc.ErrorInfo"},
                                 {"reason", "API_KEY_INVALID"},
                                 {"domain", "googleapis.com"},
                                 {"metadata", {{"service", "generativelanguage.googleapis.com"}}}},
                                {{"@type", "type.googleapis.com/google.rpc.LocalizedMessage"},
                                 {"locale", "en-US"},
                                 {"message", "API key not valid. Please pass a valid API key."}}});
    return send_error(400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT",
                      details);
  }
  if (!IsKnownModel(model)) {
    return send_error(404,
                      "models/" + route.model + " is not found for API version " + version +
                          ", or is not supported for generateContent. Call ListModels to see the "
                          "list of available models and their supported methods.",
                      "NOT_FOUND");
  }

  Action action;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!script_.empty()) {
      action = std::move(script_.front());
      script_.pop_front();
      AnnotateLocked(index, {{"action", ActionToJson(action)}});
    }
  }
  if (!action.hold.empty()) Hold(action.hold, index.epoch);
  Pause(options.latency + std::chrono::milliseconds(action.delay_ms));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;  // the server is going away; httplib closes the connection
  }

  if (!action.echo_headers.empty()) {
    const int status = action.status != 0 ? action.status : 400;
    if (action.echo_headers == "text") {
      return send(status, EchoedHeaders(req, "\r\n") + "\r\n", "text/plain; charset=UTF-8");
    }
    return send_error(status, "the request carried these headers: " + EchoedHeaders(req, "; "),
                      DefaultApiStatus(status));
  }
  if (action.answer_bytes > 0) {
    SetStatus(index, 200);
    return SendPaddedAnswer(res, static_cast<size_t>(action.answer_bytes), action.chunked);
  }
  if (action.drop_connection) {
    SetStatus(index, 0);
    res.set_content_provider(4096, kJson, [](size_t, size_t, httplib::DataSink&) { return false; });
    return;
  }
  if (action.status != 0 && action.status != 200 && action.raw_body) {
    return send(action.status, *action.raw_body, "text/html; charset=UTF-8");
  }
  if (action.malformed_json) {
    return send(200, R"({"candidates":[{"content":{"role":"model","parts":[{"text":"Here is)",
                kJson);
  }
  Answer answer = AnswerRequest(model, req.body, action, options, index);
  if (answer.status != 200) return send(answer.status, std::move(answer.body), kJson);
  std::string body = std::move(answer.body);
  if (action.truncated_body) {
    // Declare the full length, send about half, then give up: the client sees a cut connection.
    SetStatus(index, 200);
    auto shared = std::make_shared<std::string>(std::move(body));
    res.status = 200;
    res.set_content_provider(shared->size(), kJson,
                             [shared](size_t offset, size_t, httplib::DataSink& sink) {
                               const size_t half = shared->size() / 2;
                               if (offset < half)
                                 sink.write(shared->data() + offset, half - offset);
                               return false;
                             });
    return;
  }
  send(200, std::move(body), kJson);
}

}  // namespace imgmcp::fake_gemini
