#include "common/decimal.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace imgmcp {
namespace {

TEST(ParseDecimalTest, ReadsWholeNumbers) {
  EXPECT_EQ(ParseDecimal<int>("0"), 0);
  EXPECT_EQ(ParseDecimal<int>("8080"), 8080);
  EXPECT_EQ(ParseDecimal<int>("007"), 7);  // leading zeros are digits
  EXPECT_EQ(ParseDecimal<int64_t>("-42"), -42);
  EXPECT_EQ(ParseDecimal<uint64_t>("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(ParseDecimal<int64_t>("-9223372036854775808"), INT64_MIN);
  EXPECT_EQ(ParseDecimal<size_t>("123456"), size_t{123456});
}

TEST(ParseDecimalTest, RefusesWhatTheStdFunctionsLetThrough) {
  for (const char* bad : {"", " 1", "1 ", "\t1", "1\n", "+1", "0x10", "1e3", "1.0", "12abc", "abc",
                          "-", "--1", "1-", "١"}) {
    EXPECT_FALSE(ParseDecimal<int>(bad).has_value()) << '"' << bad << '"';
    EXPECT_FALSE(ParseDecimal<uint32_t>(bad).has_value()) << '"' << bad << '"';
  }
  // A NUL inside the text is not the end of it.
  EXPECT_FALSE(ParseDecimal<int>(std::string("12\0"
                                             "3",
                                             4))
                   .has_value());
}

TEST(ParseDecimalTest, NoSignSurprises) {
  // std::strtoul("-1") is ULONG_MAX; an unsigned type takes no sign at all.
  EXPECT_FALSE(ParseDecimal<uint64_t>("-1").has_value());
  EXPECT_FALSE(ParseDecimal<uint16_t>("-0").has_value());
  EXPECT_FALSE(ParseDecimal<unsigned>("+5").has_value());
  EXPECT_EQ(ParseDecimal<int>("-0"), 0);
}

TEST(ParseDecimalTest, RefusesValuesBeyondTheType) {
  EXPECT_EQ(ParseDecimal<uint16_t>("65535"), 65535);
  EXPECT_FALSE(ParseDecimal<uint16_t>("65536").has_value());
  EXPECT_EQ(ParseDecimal<int32_t>("2147483647"), INT32_MAX);
  EXPECT_FALSE(ParseDecimal<int32_t>("2147483648").has_value());
  EXPECT_FALSE(ParseDecimal<int32_t>("-2147483649").has_value());
  EXPECT_FALSE(ParseDecimal<int64_t>("9223372036854775808").has_value());
  EXPECT_FALSE(ParseDecimal<uint64_t>("18446744073709551616").has_value());
  EXPECT_FALSE(ParseDecimal<uint64_t>("99999999999999999999999999999999").has_value());
}

TEST(ParseDecimalTest, InARange) {
  EXPECT_EQ(ParseDecimal<int64_t>("1", 1, 86400), 1);
  EXPECT_EQ(ParseDecimal<int64_t>("86400", 1, 86400), 86400);
  EXPECT_FALSE(ParseDecimal<int64_t>("0", 1, 86400).has_value());
  EXPECT_FALSE(ParseDecimal<int64_t>("86401", 1, 86400).has_value());
  EXPECT_EQ(ParseDecimal<int64_t>("-3", -5, 5), -3);
  EXPECT_FALSE(ParseDecimal<int64_t>(" 3", -5, 5).has_value());
}

TEST(ParseDecimalSaturatingTest, TooBigReadsAsTheLargestValue) {
  EXPECT_EQ(ParseDecimalSaturating<uint64_t>("99999999999999999999999"), UINT64_MAX);
  EXPECT_EQ(ParseDecimalSaturating<int>("3000000000"), INT32_MAX);
  EXPECT_EQ(ParseDecimalSaturating<int>("-3000000000"), INT32_MIN);
  EXPECT_EQ(ParseDecimalSaturating<uint64_t>("1024"), 1024u);
  // Still strict about the form.
  for (const char* bad : {"", "-1", " 1", "1 ", "+1", "99999999999999999999999x"}) {
    EXPECT_FALSE(ParseDecimalSaturating<uint64_t>(bad).has_value()) << '"' << bad << '"';
  }
}

}  // namespace
}  // namespace imgmcp
