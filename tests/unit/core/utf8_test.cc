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

// DumpJson's own string writer gives nlohmann's bytes exactly: every byte
// value alone and in random mixes of ASCII, control bytes, quotes,
// backslashes, multi-byte sequences and invalid bytes (which go to the
// library's U+FFFD replacement).
TEST(Utf8Test, DumpJsonWritesStringsAsTheLibraryDoes) {
  auto library = [](const std::string& s) {
    return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
  };
  for (int b = 0; b < 256; ++b) {
    std::string s = "a" + std::string(1, static_cast<char>(b)) + "z";
    EXPECT_EQ(DumpJson(Json(s)), library(s)) << "byte " << b;
  }
  const std::vector<std::string> pieces = {"plain ",
                                           "\"",
                                           "\\",
                                           "\n",
                                           "\r\n",
                                           "\t",
                                           "\b",
                                           "\f",
                                           std::string("\0", 1),
                                           "\x01",
                                           "\x1f",
                                           "\x7f",
                                           "\xC3\xBC",
                                           "\xE2\x82\xAC",
                                           "\xF0\x9F\x98\x80",
                                           "\xE2\x82",
                                           "\xFF",
                                           "\xED\xA0\x80",
                                           "0123456789abcdef"};
  std::mt19937 rng(777);
  for (int round = 0; round < 3000; ++round) {
    std::string s;
    for (int k = rng() % 40; k > 0; --k) s += pieces[rng() % pieces.size()];
    ASSERT_EQ(DumpJson(Json(s)), library(s))
        << Json(s).dump(-1, ' ', true, Json::error_handler_t::replace);
  }
}

}  // namespace
}  // namespace maestro
