// The drill clock: the time is the file's, a bad file fails Open naming it,
// and a later unreadable or half-written file keeps the last good time.
#include "schedule/file_clock.h"

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace maestro::schedule {
namespace {

Status Write(const std::string& path, const std::string& text) {
  auto f = Env::Default()->NewWritableFile(path);
  if (!f.ok()) return f.status();
  if (Status st = (*f)->Append(text); !st.ok()) return st;
  return (*f)->Close();
}

TEST(FileClockTest, ParsesMillisecondsWithSurroundingSpace) {
  EXPECT_EQ(*ParseClockFile("1767225600000\n"), 1767225600000);
  EXPECT_EQ(*ParseClockFile("  42 "), 42);
  EXPECT_FALSE(ParseClockFile("").ok());
  EXPECT_FALSE(ParseClockFile("12:00").ok());
  EXPECT_FALSE(ParseClockFile("-5").ok());
  EXPECT_FALSE(ParseClockFile("17672256000001767225600000").ok()) << "out of range";
}

TEST(FileClockTest, FollowsTheFileAndKeepsTheLastGoodTime) {
  testing::TempDir dir;
  const std::string path = dir.File("clock");
  auto missing = FileClock::Open(*Env::Default(), path);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(path), std::string::npos);

  ASSERT_TRUE(Write(path, "1000\n").ok());
  auto clock = FileClock::Open(*Env::Default(), path);
  ASSERT_TRUE(clock.ok()) << clock.status().ToString();
  EXPECT_EQ((*clock)->NowMs(), 1000);
  ASSERT_TRUE(Write(path, "61000\n").ok());
  EXPECT_EQ((*clock)->NowMs(), 61000);
  ASSERT_TRUE(Write(path, "").ok());  // a writer caught half-way
  EXPECT_EQ((*clock)->NowMs(), 61000);
  ASSERT_TRUE(Env::Default()->RemoveFile(path).ok());
  EXPECT_EQ((*clock)->NowMs(), 61000);
  ASSERT_TRUE(Write(path, "121000").ok());
  EXPECT_EQ((*clock)->NowMs(), 121000);
}

}  // namespace
}  // namespace maestro::schedule
