// AutoTitle (the title of a task created without one) and CheckTitle (a
// title a person sets): store/title.h.
#include "store/title.h"

#include <gtest/gtest.h>

#include "core/utf8.h"

namespace maestro {
namespace {

// Characters (code points) of valid UTF-8.
size_t Chars(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

TEST(AutoTitleTest, FirstNonEmptyLineTrimmed) {
  EXPECT_EQ(AutoTitle("write a haiku"), "write a haiku");
  EXPECT_EQ(AutoTitle("\n\n   \n  Summarize the notes  \nand more\n"), "Summarize the notes");
  EXPECT_EQ(AutoTitle("\r\n\tFix the build\r\nthen test"), "Fix the build");
  EXPECT_EQ(AutoTitle("tabs\tand  spaces"), "tabs and spaces") << "whitespace runs become one";
}

TEST(AutoTitleTest, MarkdownMarkersAreStripped) {
  EXPECT_EQ(AutoTitle("# Release notes\nbody"), "Release notes");
  EXPECT_EQ(AutoTitle("### Deep heading"), "Deep heading");
  EXPECT_EQ(AutoTitle("- first item\n- second"), "first item");
  EXPECT_EQ(AutoTitle("* starred item"), "starred item");
  EXPECT_EQ(AutoTitle("> quoted request"), "quoted request");
  EXPECT_EQ(AutoTitle(">quoted without space"), "quoted without space");
  EXPECT_EQ(AutoTitle("> - quoted list item"), "quoted list item");
  EXPECT_EQ(AutoTitle("#\n##   \n- \nreal line"), "real line") << "marker-only lines are empty";
  // Not markers: no space after them, so they are part of the text.
  EXPECT_EQ(AutoTitle("-5 degrees outside"), "-5 degrees outside");
  EXPECT_EQ(AutoTitle("*bold* start"), "*bold* start");
  EXPECT_EQ(AutoTitle("#hashtag"), "#hashtag");
}

TEST(AutoTitleTest, EmptyOrWhitespaceInstructionHasNoTitle) {
  EXPECT_EQ(AutoTitle(""), "");
  EXPECT_EQ(AutoTitle("   \n\t\n  "), "");
  EXPECT_EQ(AutoTitle("#\n-\n>"), "");
}

TEST(AutoTitleTest, LongLinesAreCutAtAWordBoundaryWithEllipsis) {
  std::string line;
  while (line.size() < 200) line += "word" + std::to_string(line.size()) + " ";
  std::string t = AutoTitle(line);
  EXPECT_LE(Chars(t), kAutoTitleMaxChars) << t;
  ASSERT_GE(t.size(), 4u);
  EXPECT_EQ(t.substr(t.size() - 3), "…");
  std::string kept = t.substr(0, t.size() - 3);
  EXPECT_EQ(line.rfind(kept, 0), 0u) << "a prefix of the line";
  EXPECT_EQ(line[kept.size()], ' ') << "cut before a space, not inside a word: " << t;
  EXPECT_NE(kept.back(), ' ');

  // Exactly 80 characters: kept whole.
  std::string eighty(80, 'a');
  EXPECT_EQ(AutoTitle(eighty), eighty);
  // One word longer than the limit: cut inside it.
  std::string t2 = AutoTitle(std::string(300, 'b'));
  EXPECT_EQ(t2, std::string(79, 'b') + "…");
}

TEST(AutoTitleTest, UnicodeIsCountedByCharacterAndNeverCutMidSequence) {
  EXPECT_EQ(AutoTitle("# Résumé für Ärzte 🚀"), "Résumé für Ärzte 🚀");
  // 100 three-byte characters without spaces: 79 of them + "…".
  std::string kanji;
  for (int i = 0; i < 100; ++i) kanji += "漢";
  std::string t = AutoTitle(kanji);
  EXPECT_TRUE(IsValidUtf8(t));
  EXPECT_EQ(Chars(t), 80u);
  EXPECT_EQ(t.substr(0, 3), "漢");
  // Emoji words with spaces.
  std::string emoji;
  for (int i = 0; i < 40; ++i) emoji += "🚀🚀 ";
  std::string e = AutoTitle(emoji);
  EXPECT_TRUE(IsValidUtf8(e));
  EXPECT_LE(Chars(e), 80u);
  EXPECT_EQ(e.substr(e.size() - 3), "…");
  // Invalid bytes become U+FFFD rather than leaking into a title.
  std::string bad = AutoTitle("ok \xff\xfe done");
  EXPECT_TRUE(IsValidUtf8(bad));
  EXPECT_NE(bad.find("\xEF\xBF\xBD"), std::string::npos);
  // Control characters inside a line become spaces.
  EXPECT_EQ(AutoTitle("a\x01\x02"
                      "b"),
            "a b");
}

TEST(CheckTitleTest, TrimsAndRefusesEmptyLongOrControlCharacters) {
  std::string out;
  ASSERT_TRUE(CheckTitle("  Weekly report  ", &out).ok());
  EXPECT_EQ(out, "Weekly report");
  std::string two_hundred;
  for (int i = 0; i < 200; ++i) two_hundred += "é";
  EXPECT_TRUE(CheckTitle(two_hundred, &out).ok()) << "200 characters (400 bytes) is the limit";
  for (const std::string& bad :
       {std::string(""), std::string("   "), two_hundred + "x", std::string("line\nbreak"),
        std::string("tab\there"), std::string("nul\0x", 5), std::string("c1 \xC2\x85 x"),
        std::string("bad \xff")}) {
    Status st = CheckTitle(bad, &out);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(st.field(), "title") << bad;
  }
}

}  // namespace
}  // namespace maestro
