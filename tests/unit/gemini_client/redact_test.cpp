// Redaction of credentials from messages (gemini_client/redact.h): known secrets wherever they
// are, and shapes of OAuth credentials even when a quotation cut them short.
#include "gemini_client/redact.h"

#include <gtest/gtest.h>

#include <string>

namespace imgmcp::gemini {
namespace {

TEST(RedactTest, KnownSecretsAreReplacedEverywhereLongestFirst) {
  std::string text = "key k-SECRET-1 then k-SECRET-1 and k-SECRET-12";
  EXPECT_TRUE(RedactSecrets(text, {"k-SECRET-1", "k-SECRET-12", "abc", ""}));
  EXPECT_EQ(text, "key [redacted] then [redacted] and [redacted]");
  std::string untouched = "nothing here; abc is too short to count";
  EXPECT_FALSE(RedactSecrets(untouched, {"abc", "zzzz"}));
  EXPECT_EQ(untouched, "nothing here; abc is too short to count");
}

TEST(RedactTest, BearerValuesAndGoogleAccessTokensAreRedactedEvenWhenCut) {
  EXPECT_EQ(Redact("Authorization: Bearer abc.DEF-123_x~+/= Connection: close", {}),
            "Authorization: Bearer [redacted] Connection: close");
  EXPECT_EQ(Redact("authorization: bearer t0k3n", {}), "authorization: bearer [redacted]");
  // Cut off by a quotation's length limit: the piece left is still recognised.
  EXPECT_EQ(Redact("token ya29.a0AfB_byC…", {}), "token [redacted]…");
  EXPECT_EQ(Redact("(ya29.x)", {}), "([redacted])");
}

TEST(RedactTest, RefreshTokensAndJwtsAreRedactedByShape) {
  EXPECT_EQ(Redact("refresh_token=1//0gAbCdEfGhIjKlMn-op, next", {}),
            "refresh_token=[redacted], next");
  const std::string jwt =
      "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJzYUBwLmlhbS5nc2VydmljZWFjY291bnQuY29tIn0.c2lnbmF0dXJl";
  EXPECT_EQ(Redact("assertion=" + jwt + " end", {}), "assertion=[redacted] end");
  // Cut inside the claims.
  EXPECT_EQ(Redact("assertion=" + jwt.substr(0, 40), {}), "assertion=[redacted]");
}

TEST(RedactTest, OrdinaryMessagesAreLeftAlone) {
  for (const std::string& text :
       {std::string("could not connect to Gemini (http://127.0.0.1:8080, through the proxy)"),
        std::string("the token endpoint https://oauth2.googleapis.com/token refused (HTTP 400)"),
        std::string("model gemini-3.1-flash-lite-image; file /home/u/.config/gcloud/a.json"),
        std::string("HTTP/1.1 503; 1/2 attempts; eyJ alone; Bearer"),
        std::string("the call deadline passed (2.1 s, attempt 1 of 5)")}) {
    EXPECT_EQ(Redact(text, {}), text);
  }
}

TEST(RedactTest, AlreadyRedactedTextStaysAsItIs) {
  const std::string once = Redact("Bearer ya29.secret and key K-123456", {"K-123456"});
  EXPECT_EQ(once, "Bearer [redacted] and key [redacted]");
  EXPECT_EQ(Redact(once, {"K-123456"}), once);
}

}  // namespace
}  // namespace imgmcp::gemini
