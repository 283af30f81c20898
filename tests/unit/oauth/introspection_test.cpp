// TokenIntrospection against a fake RFC 7662 endpoint and a fake clock: an active answer for
// this resource becomes a principal, every other answer is refused, and answers are reused for at
// most a minute and never past the token's expiry.
#include "server/oauth/introspection.h"

#include <gtest/gtest.h>

#include <mutex>

#include "common/base64.h"
#include "tests/unit/oauth/fake_clock.h"
#include "tests/unit/oauth/fake_issuer.h"

namespace imgmcp::oauth {
namespace {

using testing::FakeClock;
using testing::kIssuer;

constexpr char kIntrospectedResource[] = "https://images.test/mcp";
constexpr char kEndpoint[] = "https://issuer.test/introspect";

class IntrospectionTest : public ::testing::Test {
 protected:
  IntrospectionTest() {
    options_.issuers = {kIssuer};
    options_.introspection_url = kEndpoint;
    options_.client_id = "imgmcp rs";
    options_.client_secret = "s3cret:x";
    options_.post_form = [this](const std::string& url, const std::string& form,
                                const std::string& authorization) -> Result<FetchedDocument> {
      std::lock_guard lock(mu_);
      ++asked_;
      last_url_ = url;
      last_form_ = form;
      last_authorization_ = authorization;
      return FetchedDocument{status_, answer_.dump()};
    };
    introspection_ = std::make_unique<TokenIntrospection>(options_, clock_);
  }

  Json Active(int lifetime = 3600) const {
    return Json{
        {"active", true},         {"sub", "alice"},     {"aud", kIntrospectedResource},
        {"scope", "imgmcp:read"}, {"client_id", "web"}, {"exp", clock_.WallSeconds() + lifetime},
        {"iss", kIssuer}};
  }

  std::mutex mu_;
  int asked_ = 0;
  std::string last_url_, last_form_, last_authorization_;
  int status_ = 200;
  Json answer_;
  FakeClock clock_;
  OAuthOptions options_;
  std::unique_ptr<TokenIntrospection> introspection_;
};

TEST_F(IntrospectionTest, AnActiveTokenForThisResourceBecomesAPrincipal) {
  answer_ = Active();
  auto principal = introspection_->Introspect("opaque+token/1", kIntrospectedResource);
  ASSERT_TRUE(principal.ok()) << principal.error().message;
  EXPECT_EQ(principal->issuer, kIssuer);
  EXPECT_EQ(principal->subject, "alice");
  EXPECT_EQ(principal->client_id, "web");
  EXPECT_TRUE(principal->HasScope("imgmcp:read"));
  EXPECT_EQ(last_url_, kEndpoint);
  EXPECT_EQ(last_form_, "token=opaque%2Btoken%2F1&token_type_hint=access_token");
  EXPECT_EQ(last_authorization_, "Basic " + Base64Encode("imgmcp%20rs:s3cret%3Ax"));
}

TEST_F(IntrospectionTest, AnswersAreReusedForAMinuteAtMost) {
  answer_ = Active();
  ASSERT_TRUE(introspection_->Introspect("t1", kIntrospectedResource).ok());
  ASSERT_TRUE(introspection_->Introspect("t1", kIntrospectedResource).ok());
  EXPECT_EQ(asked_, 1);
  clock_.Advance(std::chrono::seconds(61));
  answer_ = Json{{"active", false}};  // revoked meanwhile
  auto revoked = introspection_->Introspect("t1", kIntrospectedResource);
  EXPECT_FALSE(revoked.ok());
  EXPECT_EQ(asked_, 2);
}

TEST_F(IntrospectionTest, AnAnswerIsNotReusedPastTheTokensExpiry) {
  answer_ = Active(/*lifetime=*/10);
  ASSERT_TRUE(introspection_->Introspect("t2", kIntrospectedResource).ok());
  clock_.Advance(std::chrono::seconds(11));
  introspection_->Introspect("t2", kIntrospectedResource).ok();
  EXPECT_EQ(asked_, 2);
}

TEST_F(IntrospectionTest, AnswersThatDoNotFitAreRefused) {
  struct Case {
    const char* why;
    Json answer;
  };
  Json wrong_audience = Active();
  wrong_audience["aud"] = "https://other.test/mcp";
  Json other_issuer = Active();
  other_issuer["iss"] = "https://evil.test";
  Json no_subject = Active();
  no_subject.erase("sub");
  const Case cases[] = {{"inactive", Json{{"active", false}}},
                        {"active as a string", Json{{"active", "true"}}},
                        {"wrong audience", wrong_audience},
                        {"untrusted issuer", other_issuer},
                        {"no subject", no_subject}};
  int n = 0;
  for (const Case& c : cases) {
    answer_ = c.answer;
    auto principal = introspection_->Introspect("t-" + std::to_string(n++), kIntrospectedResource);
    ASSERT_FALSE(principal.ok()) << c.why;
    EXPECT_EQ(principal.error().code, ErrorCode::kPermissionDenied) << c.why;
  }
}

TEST_F(IntrospectionTest, AnEndpointThatFailsIsUnavailableAndNotCached) {
  status_ = 500;
  auto failed = introspection_->Introspect("t3", kIntrospectedResource);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(failed.error().message.find("s3cret"), std::string::npos);
  status_ = 200;
  answer_ = Active();
  EXPECT_TRUE(introspection_->Introspect("t3", kIntrospectedResource).ok());
}

}  // namespace
}  // namespace imgmcp::oauth
