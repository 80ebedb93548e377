// The WAL reaches the database file through the Checkpointer: its thread
// when the WAL passes the signal size, the writer itself past the inline size.
#include "store/sqlite/checkpointer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <climits>
#include <filesystem>
#include <thread>

#include "support/temp_dir.h"

namespace maestro::sqlite {
namespace {

constexpr int kBlob = 4'000;
constexpr int kRows = 1'000;  // ~1,000 pages, in 50 commits

// Writes kRows rows of kBlob bytes through `writer`.
void WriteRows(SqliteConn& writer) {
  for (int commit = 0; commit < 50; ++commit) {
    ASSERT_TRUE(writer
                    .ExecScript("BEGIN IMMEDIATE; INSERT INTO t SELECT randomblob(" +
                                std::to_string(kBlob) +
                                ") FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 "
                                "FROM n WHERE i < " +
                                std::to_string(kRows / 50) + ") SELECT i FROM n); COMMIT")
                    .ok());
  }
}

// A connection on a fresh `path` with the table WriteRows fills.
std::unique_ptr<SqliteConn> OpenWriter(const std::string& path) {
  auto writer = SqliteConn::Open(path, 1'000);
  EXPECT_TRUE(writer.ok());
  if (!writer.ok()) return nullptr;
  EXPECT_TRUE((*writer)->ExecScript("CREATE TABLE t(x BLOB)").ok());
  return std::move(writer).value();
}

uintmax_t FileSize(const std::string& path) {
  std::error_code ec;
  auto n = std::filesystem::file_size(path, ec);
  return ec ? 0 : n;
}

TEST(CheckpointerTest, ItsThreadMovesTheWalIntoTheDatabaseFile) {
  testing::TempDir dir;
  std::string path = dir.File("c.db");
  auto writer = OpenWriter(path);
  ASSERT_NE(writer, nullptr);
  {
    Checkpointer c(path, 1'000, /*signal_pages=*/100, /*inline_pages=*/INT_MAX);
    c.Attach(*writer);
    WriteRows(*writer);
    // The writer never checkpoints here (the inline size is out of reach),
    // so the rows can only reach the database file through the thread.
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (FileSize(path) < uintmax_t{kBlob} * kRows * 9 / 10 &&
           std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_GE(FileSize(path), uintmax_t{kBlob} * kRows * 9 / 10);
  }
}

TEST(CheckpointerTest, TheWriterCheckpointsItselfPastTheInlineSize) {
  testing::TempDir dir;
  std::string path = dir.File("c.db");
  auto writer = OpenWriter(path);
  ASSERT_NE(writer, nullptr);
  Checkpointer c(path, 1'000, /*signal_pages=*/INT_MAX, /*inline_pages=*/100);
  c.Attach(*writer);
  WriteRows(*writer);
  // No thread was asked: the last commits' own checkpoints wrote the file.
  EXPECT_GE(FileSize(path), uintmax_t{kBlob} * kRows * 8 / 10);
  EXPECT_LT(FileSize(path + "-wal"), uintmax_t{kBlob} * kRows / 2) << "the WAL was not reused";
}

}  // namespace
}  // namespace maestro::sqlite
