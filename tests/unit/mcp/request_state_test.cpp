// RequestStateSeal: MRTR requestState goes out sealed (bound to its request, with an expiry, MACed)
// and only an unaltered, unexpired state of the same request opens.
#include "mcp/request_state.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/unit/manual_clock.h"

namespace imgmcp::mcp {
namespace {

TEST(RequestStateSealTest, OpensWhatItSealedForTheSameRequest) {
  RequestStateSeal seal("k");
  std::string state = "any bytes: . = {\"json\":1}";
  state.push_back('\0');
  const std::string sealed = seal.Seal("tools/call t", state);
  EXPECT_EQ(sealed.find(state), std::string::npos);  // opaque, not the plain text
  auto opened = seal.Open("tools/call t", sealed);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  EXPECT_EQ(opened.value(), state);
  EXPECT_EQ(seal.Open("tools/call t", seal.Seal("tools/call t", "")).value(), "");
}

TEST(RequestStateSealTest, RefusesAlteredForeignAndMalformedStates) {
  RequestStateSeal seal("k");
  const std::string sealed = seal.Seal("tools/call t", "approved");
  std::string flipped = sealed;
  flipped[sealed.find('.') + 1] ^= 1;  // one bit of the payload
  for (const std::string& bad :
       {sealed + "-TAMPERED", flipped, std::string("approved"), std::string(""), std::string("."),
        std::string("1.2.3"), sealed.substr(0, sealed.size() - 1)}) {
    auto opened = seal.Open("tools/call t", bad);
    ASSERT_FALSE(opened.ok()) << bad;
    EXPECT_EQ(opened.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(opened.error().message.rfind("requestState ", 0), 0u) << opened.error().message;
  }
  // Bound to its request: another tool, another method, another server key.
  EXPECT_FALSE(seal.Open("tools/call u", sealed).ok());
  EXPECT_FALSE(seal.Open("prompts/get t", sealed).ok());
  EXPECT_FALSE(RequestStateSeal("other key").Open("tools/call t", sealed).ok());
  // Servers sharing a key (replicas behind one balancer) open each other's states.
  EXPECT_TRUE(RequestStateSeal("k").Open("tools/call t", sealed).ok());
  // No key configured: a random one, so two servers do not share.
  EXPECT_FALSE(RequestStateSeal("")
                   .Open("tools/call t", RequestStateSeal("").Seal("tools/call t", "x"))
                   .ok());
}

TEST(RequestStateSealTest, ExpiresAfterItsTtl) {
  test_util::ManualClock clock;
  RequestStateSeal seal("k", std::chrono::seconds(60), &clock);
  const std::string sealed = seal.Seal("tools/call t", "s");
  clock.Advance(std::chrono::seconds(59));
  EXPECT_TRUE(seal.Open("tools/call t", sealed).ok());
  clock.Advance(std::chrono::seconds(2));
  auto late = seal.Open("tools/call t", sealed);
  ASSERT_FALSE(late.ok());
  EXPECT_NE(late.error().message.find("expired"), std::string::npos);
}

}  // namespace
}  // namespace imgmcp::mcp
