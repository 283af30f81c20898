#include "common/trace_context.h"

#include <gtest/gtest.h>

namespace imgmcp {
namespace {

constexpr char kValid[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(TraceContextTest, ReadsTheFourFieldsOfAValidTraceparent) {
  auto parsed = ParseTraceParent(kValid);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(parsed->parent_id, "00f067aa0ba902b7");
  EXPECT_EQ(parsed->flags, "01");
  // A later version may append fields after a dash.
  EXPECT_TRUE(ParseTraceParent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x"));
}

TEST(TraceContextTest, RefusesWhatTheSpecificationCallsInvalid) {
  for (const char* bad : {
           "",
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",       // no flags
           "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",    // upper case
           "00-00000000000000000000000000000000-00f067aa0ba902b7-01",    // zero trace id
           "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",    // zero parent id
           "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",    // version ff
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",  // v00 has no more
           "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
           "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
       }) {
    EXPECT_FALSE(ParseTraceParent(bad).has_value()) << bad;
  }
}

TEST(TraceContextTest, AChildKeepsTheTraceAndFlagsWithAFreshSpan) {
  const TraceParent parent = *ParseTraceParent(kValid);
  const std::string child = ChildTraceParent(parent);
  auto parsed = ParseTraceParent(child);
  ASSERT_TRUE(parsed.has_value()) << child;
  EXPECT_EQ(parsed->trace_id, parent.trace_id);
  EXPECT_EQ(parsed->flags, parent.flags);
  EXPECT_NE(parsed->parent_id, parent.parent_id);
  EXPECT_NE(ChildTraceParent(parent), child);
}

}  // namespace
}  // namespace imgmcp
