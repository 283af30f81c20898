// How a generateContent request proves who sends it: the auth half of the endpoint/auth strategy
// (docs/generation.md, "Backends"). An API key goes in x-goog-api-key; a Vertex AI OAuth access
// token in Authorization: Bearer, from a TokenCache (token_cache.h). GeminiClient asks for the
// credential before each attempt and reports a 401 back, so a rejected token is refreshed once.
#pragma once

#include <chrono>
#include <stop_token>
#include <string>
#include <vector>

#include "common/result.h"

namespace imgmcp::gemini {

class RequestAuth {
 public:
  virtual ~RequestAuth() = default;
  // The header the credential goes in ("x-goog-api-key" or "Authorization").
  virtual std::string HeaderName() const = 0;
  // The header's value for the next attempt; may fetch a token (bounded by cancel and deadline).
  // Errors never contain the credential.
  virtual Result<std::string> Credential(std::stop_token cancel,
                                         std::chrono::steady_clock::time_point deadline) = 0;
  // The server answered 401 to `credential`: forget it, so the next Credential() is fresh. True
  // when a fresh one may be different (a token), false when retrying cannot help (a key).
  virtual bool Rejected(const std::string& credential) = 0;
  // What kind of credential this is, for --self-check and errors: "API key (GEMINI_API_KEY)",
  // "service_account from /path/key.json", … Never the credential itself.
  virtual std::string Describe() const = 0;
  // The secrets an answer could echo back into a message, to be redacted from it (redact.h):
  // the key, or the access tokens handed out lately and the credential's own secrets. Thread-safe.
  virtual std::vector<std::string> SecretsToScrub() const { return {}; }
};

// A fixed API key: Gemini's, or a Vertex AI express-mode key. `description` says where it came
// from, e.g. "API key (GEMINI_API_KEY)".
class ApiKeyAuth final : public RequestAuth {
 public:
  ApiKeyAuth(std::string key, std::string description)
      : key_(std::move(key)), description_(std::move(description)) {}
  std::string HeaderName() const override { return "x-goog-api-key"; }
  Result<std::string> Credential(std::stop_token, std::chrono::steady_clock::time_point) override {
    return key_;
  }
  bool Rejected(const std::string&) override { return false; }
  std::string Describe() const override { return description_; }
  std::vector<std::string> SecretsToScrub() const override { return {key_}; }

 private:
  const std::string key_;
  const std::string description_;
};

}  // namespace imgmcp::gemini
