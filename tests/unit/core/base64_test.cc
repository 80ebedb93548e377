// Base64 both ways, and the strict decoder refusing every text that is not
// the one canonical encoding of some bytes.
#include "core/base64.h"

#include <gtest/gtest.h>

namespace maestro {
namespace {

TEST(Base64Test, RoundTripsEveryLengthAndTheRfcVectors) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  std::string bytes;
  for (int i = 0; i < 300; ++i) {
    bytes.push_back(static_cast<char>(i * 7));
    auto back = Base64Decode(Base64Encode(bytes));
    ASSERT_TRUE(back.has_value()) << i;
    EXPECT_EQ(*back, bytes) << i;
  }
}

TEST(Base64Test, RefusesWhatIsNotStrictBase64) {
  for (const char* bad : {"Zg=", "Zg", "Z===", "Zm9v\n", "Zm 9v", "Zm9v====", "Zm-_",
                          "Zh==", "Zm9=", "=Zm9", "Zg==Zg==", "Zm9v!A=="}) {
    EXPECT_FALSE(Base64Decode(bad).has_value()) << bad;
  }
  EXPECT_EQ(Base64Decode("").value(), "");
}

}  // namespace
}  // namespace maestro
