// ValidUtf8 / Utf8Prefix / DumpJson on hostile bytes: random input always
// comes out well-formed and serializable; valid text is untouched.
#include "core/utf8.h"

#include <gtest/gtest.h>

#include <random>

#include "core/json.h"

namespace maestro {
namespace {

TEST(Utf8Test, ValidTextIsUnchangedAndInvalidBytesBecomeReplacementCharacters) {
  EXPECT_EQ(ValidUtf8("plain ascii"), "plain ascii");
  EXPECT_EQ(ValidUtf8("gr\xC3\xBC\xC3\x9F \xE2\x82\xAC \xF0\x9F\x98\x80"),
            "gr\xC3\xBC\xC3\x9F \xE2\x82\xAC \xF0\x9F\x98\x80");
  EXPECT_EQ(ValidUtf8(std::string("a\0b", 3)), std::string("a\0b", 3));  // NUL is valid
  EXPECT_EQ(ValidUtf8("cut \xE2\x82"), "cut \xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(ValidUtf8("\xFF\xFE"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(ValidUtf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong '/'
  EXPECT_EQ(ValidUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(ValidUtf8("\xF4\x90\x80\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(Utf8Test, PrefixNeverEndsInsideASequence) {
  const std::string euro = "ab\xE2\x82\xAC";  // 2 + 3 bytes
  EXPECT_EQ(Utf8Prefix(euro, 5), euro);
  EXPECT_EQ(Utf8Prefix(euro, 4), "ab");
  EXPECT_EQ(Utf8Prefix(euro, 3), "ab");
  EXPECT_EQ(Utf8Prefix(euro, 2), "ab");
  EXPECT_EQ(Utf8Prefix(euro, 0), "");
}

TEST(Utf8Test, RandomBytesAlwaysComeOutWellFormedAndSerializable) {
  std::mt19937 rng(12345);
  for (int round = 0; round < 2000; ++round) {
    std::string bytes(rng() % 300, '\0');
    for (char& ch : bytes) ch = static_cast<char>(rng() & 0xFF);
    std::string clean = ValidUtf8(bytes);
    ASSERT_TRUE(IsValidUtf8(clean));
    EXPECT_NO_THROW((void)Json(clean).dump());  // the strict serializer accepts it
    EXPECT_TRUE(IsValidUtf8(Utf8Prefix(clean, rng() % 300)));
    // DumpJson never throws, even on the raw bytes.
    EXPECT_NO_THROW((void)DumpJson(Json{{"content", bytes}}));
  }
}

}  // namespace
}  // namespace maestro
