#include "server/http/sse.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

namespace imgmcp::http {
namespace {

using std::chrono::milliseconds;

TEST(EventIdTest, RoundTrip) {
  EXPECT_EQ(FormatEventId({42, 7}), "42_7");
  auto id = ParseEventId("42_7");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->seq, 42u);
  EXPECT_EQ(id->stream, 7u);
  EXPECT_FALSE(ParseEventId("").has_value());
  EXPECT_FALSE(ParseEventId("42").has_value());
  EXPECT_FALSE(ParseEventId("_7").has_value());
  EXPECT_FALSE(ParseEventId("42_").has_value());
  EXPECT_FALSE(ParseEventId("4x_7").has_value());
  EXPECT_FALSE(ParseEventId("42_7_1").has_value());
  EXPECT_FALSE(ParseEventId("-1_2").has_value());
}

TEST(FramesTest, Format) {
  EXPECT_EQ(PrimingFrame("1_0", milliseconds(1500)), "id: 1_0\nretry: 1500\ndata: \n\n");
  EXPECT_EQ(MessageFrame("2_3", R"({"a":1})"), "event: message\nid: 2_3\ndata: {\"a\":1}\n\n");
  EXPECT_EQ(CommentFrame("keep-alive"), ": keep-alive\n\n");
}

TEST(SseChannelTest, DeliversInOrderThenEnds) {
  SseChannel channel;
  channel.Push("a");
  channel.Push("b");
  channel.Finish();
  channel.Push("ignored after finish");
  std::string out;
  EXPECT_EQ(channel.Pull(&out, milliseconds(0)), SseChannel::PullResult::kData);
  EXPECT_EQ(out, "ab");
  EXPECT_EQ(channel.Pull(&out, milliseconds(0)), SseChannel::PullResult::kEnd);
}

TEST(SseChannelTest, TimesOutWhenIdleAndAbortDropsQueued) {
  SseChannel channel;
  std::string out;
  EXPECT_EQ(channel.Pull(&out, milliseconds(1)), SseChannel::PullResult::kTimeout);
  channel.Push("x");
  channel.Abort();
  EXPECT_EQ(channel.Pull(&out, milliseconds(0)), SseChannel::PullResult::kAborted);
  EXPECT_TRUE(channel.aborted());
}

TEST(SseChannelTest, WakesAConsumerBlockedOnAnotherThread) {
  SseChannel channel;
  std::string got;
  std::thread consumer([&] {
    std::string out;
    while (true) {
      auto r = channel.Pull(&out, milliseconds(10000));
      if (r == SseChannel::PullResult::kData) got += out;
      if (r == SseChannel::PullResult::kEnd) return;
    }
  });
  for (int i = 0; i < 100; ++i) channel.Push(std::to_string(i % 10));
  channel.Finish();
  consumer.join();
  EXPECT_EQ(got.size(), 100u);
}

// A channel watching its client's socket ends a Pull as soon as that client hangs up — long before
// the keep-alive interval — and a queued frame still comes first.
TEST(SseChannelTest, AWatchedClientThatHangsUpEndsThePullAtOnce) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  SseChannel channel(fds[0]);
  std::string out;
  EXPECT_EQ(channel.Pull(&out, milliseconds(1)), SseChannel::PullResult::kTimeout);
  std::thread client([&] { ::close(fds[1]); });
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(channel.Pull(&out, milliseconds(60'000)), SseChannel::PullResult::kHangup);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
  client.join();
  channel.Push("x");
  EXPECT_EQ(channel.Pull(&out, milliseconds(60'000)), SseChannel::PullResult::kData);
  ::close(fds[0]);
}

TEST(SseChannelTest, AWatchedChannelIsStillWokenByItsProducer) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  SseChannel channel(fds[0]);
  std::string got;
  std::thread consumer([&] {
    std::string out;
    while (true) {
      auto r = channel.Pull(&out, milliseconds(60'000));
      if (r == SseChannel::PullResult::kData) got += out;
      if (r != SseChannel::PullResult::kData) return;
    }
  });
  for (int i = 0; i < 100; ++i) channel.Push("y");
  channel.Finish();
  consumer.join();
  EXPECT_EQ(got, std::string(100, 'y'));
  ::close(fds[0]);
  ::close(fds[1]);
}

}  // namespace
}  // namespace imgmcp::http
