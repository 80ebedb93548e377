// Crash safety of the file primitives: torn appends are cut, rewrites are
// all-or-nothing even when the writer is killed mid-rewrite.
#include "core/durable_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "context/jsonl_log.h"
#include "support/fault_injection_env.h"
#include "support/temp_dir.h"

namespace maestro::context {
namespace {

using maestro::testing::ReadWholeFile;
using maestro::testing::TempDir;

void WriteRaw(const std::string& path, const std::string& data, bool append = true) {
  std::ofstream out(path, append ? std::ios::app | std::ios::binary : std::ios::binary);
  out << data;
}

TEST(DurableFileTest, CutTornTailRemovesOnlyThePartialLine) {
  TempDir d;
  std::string p = d.File("a.jsonl");
  WriteRaw(p, "{\"seq\":1}\n{\"seq\":2}\n{\"seq\":3,\"con");
  auto cut = CutTornTail(*Env::Default(), p);
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(*cut, std::string("{\"seq\":3,\"con").size());
  EXPECT_EQ(ReadWholeFile(p), "{\"seq\":1}\n{\"seq\":2}\n");
  auto again = CutTornTail(*Env::Default(), p);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0u);
}

TEST(DurableFileTest, JsonlLogOpenCutsTornLineAndContinuesSeq) {
  TempDir d;
  std::string p = d.File("tools.jsonl");
  {
    auto log = JsonlLog::Open(*Env::Default(), p);
    ASSERT_TRUE(log.ok());
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(log->Append({{"tool", "ReadFile"}}).ok());
  }
  WriteRaw(p, "{\"tool\":\"Wri");  // the crash tore the fourth append
  auto log = JsonlLog::Open(*Env::Default(), p);
  ASSERT_TRUE(log.ok());
  EXPECT_GT(log->open_info().torn_bytes_cut, 0u);
  EXPECT_EQ(log->count(), 3);
  EXPECT_EQ(log->next_seq(), 4);
  auto seq = log->Append({{"tool", "WriteFile"}});
  ASSERT_TRUE(seq.ok());
  EXPECT_EQ(*seq, 4);
  std::vector<int64_t> seqs;
  ASSERT_TRUE(log->ForEach([&](const Json& j) {
                   seqs.push_back(j["seq"].get<int64_t>());
                   return true;
                 })
                  .ok());
  EXPECT_EQ(seqs, (std::vector<int64_t>{1, 2, 3, 4}));
}

// A new file's name is made durable at its first synced append, not at
// open: power loss keeps a synced record with its file, and may drop a file
// that was never synced (nothing in it was promised).
TEST(DurableFileTest, ANewFilesNameIsSyncedWithItsFirstSyncedAppend) {
  TempDir d;
  testing::FaultInjectionEnv env;
  {
    auto synced = AppendFile::Open(env, d.File("synced.jsonl"));
    ASSERT_TRUE(synced.ok());
    ASSERT_TRUE(synced->Append("{\"seq\":1}\n", /*sync=*/true).ok());
    auto loose = AppendFile::Open(env, d.File("loose.jsonl"));
    ASSERT_TRUE(loose.ok());
    ASSERT_TRUE(loose->Append("{\"seq\":1}\n").ok());
  }
  ASSERT_TRUE(env.SimulateCrash(testing::FaultInjectionEnv::Crash::kPowerLoss).ok());
  EXPECT_EQ(ReadWholeFile(d.File("synced.jsonl")), "{\"seq\":1}\n");
  EXPECT_FALSE(std::filesystem::exists(d.File("loose.jsonl")));
}

// A log most tasks never write costs no file: Open leaves a missing file
// missing, the first Append creates it; an existing one is appended to.
TEST(DurableFileTest, AMissingFileIsCreatedByTheFirstAppendNotByOpen) {
  TempDir d;
  const std::string p = d.File("summaries.jsonl");
  auto log = AppendFile::Open(*Env::Default(), p);
  ASSERT_TRUE(log.ok());
  EXPECT_TRUE(log->is_open());
  EXPECT_FALSE(std::filesystem::exists(p)) << "no file before anything is written";
  ASSERT_TRUE(log->Append("{\"seq\":1}\n").ok());
  ASSERT_TRUE(log->Append("{\"seq\":2}\n").ok());
  EXPECT_EQ(ReadWholeFile(p), "{\"seq\":1}\n{\"seq\":2}\n");
  auto again = AppendFile::Open(*Env::Default(), p);
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE(again->Append("{\"seq\":3}\n").ok());
  EXPECT_EQ(ReadWholeFile(p), "{\"seq\":1}\n{\"seq\":2}\n{\"seq\":3}\n");
  // A directory that is gone fails the append that would create the file,
  // with nothing written: the error names the file, and a later append
  // (the directory back) succeeds.
  const std::string gone = d.File("gone/events.jsonl");
  auto orphan = AppendFile::Open(*Env::Default(), gone);
  ASSERT_TRUE(orphan.ok());
  Status st = orphan->Append("{\"seq\":1}\n");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("events.jsonl"), std::string::npos) << st.ToString();
  std::filesystem::create_directories(d.File("gone"));
  ASSERT_TRUE(orphan->Append("{\"seq\":1}\n").ok());
  EXPECT_EQ(ReadWholeFile(gone), "{\"seq\":1}\n");
}

// durable = false (files rebuilt from a synced log): no fsync at all, the
// rename still all-or-nothing for readers.
TEST(DurableFileTest, ANotDurableReplaceSyncsNothing) {
  TempDir d;
  testing::FaultInjectionEnv env;
  ReplaceOptions fast;
  fast.durable = false;
  env.SetSyncDelay(std::chrono::milliseconds(200));
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(ReplaceFileContent(env, d.File("current.jsonl"), "a\n", fast).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(200))
      << "a Sync or SyncDir ran (each sleeps 200 ms here)";
  EXPECT_EQ(ReadWholeFile(d.File("current.jsonl")), "a\n");
  EXPECT_FALSE(std::filesystem::exists(d.File("current.jsonl.tmp")));
}

TEST(DurableFileTest, ReplaceFileLeavesOldContentWhenWriterFails) {
  TempDir d;
  std::string p = d.File("current.jsonl");
  ASSERT_TRUE(ReplaceFileContent(*Env::Default(), p, "old\n").ok());
  Status st = ReplaceFile(*Env::Default(), p, [](const ByteSink& sink) -> Status {
    MAESTRO_RETURN_IF_ERROR(sink("new partial"));
    return Internal("disk full");
  });
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(ReadWholeFile(p), "old\n");
  EXPECT_FALSE(std::filesystem::exists(p + ".tmp"));
}

// A child rewrites the file forever, alternating two versions of ~1.5 MB;
// it is SIGKILLed at varying moments. Every time, the file must be exactly
// one version — never a mix, never truncated.
TEST(DurableFileTest, KilledMidRewriteLeavesOldOrNewNeverAMix) {
  TempDir d;
  std::string p = d.File("current.jsonl");
  auto version = [](char c) {
    std::string line = "{\"role\":\"user\",\"content\":\"" + std::string(1000, c) + "\"}\n";
    std::string all;
    for (int i = 0; i < 1500; ++i) all += line;
    return all;
  };
  const std::string a = version('a'), b = version('b');
  ASSERT_TRUE(ReplaceFileContent(*Env::Default(), p, a).ok());
  for (int round = 0; round < 8; ++round) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      for (int i = 0;; ++i) {
        const std::string& v = i % 2 ? a : b;
        Status st = ReplaceFile(*Env::Default(), p, [&](const ByteSink& sink) -> Status {
          for (size_t off = 0; off < v.size(); off += 4096) {
            MAESTRO_RETURN_IF_ERROR(sink(std::string_view(v).substr(off, 4096)));
          }
          return Status::Ok();
        });
        if (!st.ok()) _exit(3);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + round * 17));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child stopped by itself: " << status;
    std::string now = ReadWholeFile(p);
    EXPECT_TRUE(now == a || now == b) << "round " << round << ": size " << now.size();
  }
}

TEST(DurableFileTest, ForEachLineGivesOffsetsAndSkipsTornTail) {
  TempDir d;
  std::string p = d.File("x");
  std::string big(100000, 'x');  // spans buffer reads
  WriteRaw(p, "one\n" + big + "\nthree\ntorn");
  std::vector<std::pair<size_t, uint64_t>> seen;
  ASSERT_TRUE(ForEachLine(*Env::Default(), p, [&](std::string_view line, uint64_t off) {
                seen.emplace_back(line.size(), off);
                return true;
              }).ok());
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], (std::pair<size_t, uint64_t>{3, 0}));
  EXPECT_EQ(seen[1], (std::pair<size_t, uint64_t>{100000, 4}));
  EXPECT_EQ(seen[2], (std::pair<size_t, uint64_t>{5, 100005}));
}

}  // namespace
}  // namespace maestro::context
