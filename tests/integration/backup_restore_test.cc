// `maestro backup` and `maestro restore` as an operator runs them: real
// binaries, a real serve (demo mode with a scripted fakellm), real files.
// The drill: tasks are created continuously while three backups are taken;
// serve stops, its database is wiped, the last backup is restored, and the
// restarted serve shows every task committed before that backup started.
// Around it, what restore and backup refuse: a running maestro, a file that
// is not a maestro database (text, a symlink, a FIFO, a newer schema, a
// corrupted page), a database with tasks without --force, an existing OUT
// without --force, side files planted as symlinks, and PostgreSQL.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "core/json.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace maestro {
namespace {

using namespace std::chrono_literals;
using testing::Process;
using testing::ReadWholeFile;
using testing::WriteFile;
namespace fs = std::filesystem;

// Every task of the drill completes at once through the `complete` tool.
constexpr char kScript[] = R"(replies:
- match:
    any_message_contains: backup-drill
  repeat: 0
  text: 'Done.'
  tool_calls:
  - name: complete
    arguments:
      status: success
      result: drilled
)";

struct Ran {
  int code = -1;
  std::string out;  // stdout + stderr
};

class BackupRestoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = testing::FreePort();
    config_ = dir_.File("maestro.yaml");
    WriteFile(config_,
              "workers: 2\nlog:\n  level: warn\n"
              "jobs:\n  poll_interval_ms: 50\n  shutdown_grace_ms: 1000\n");
    WriteFile(dir_.File("script.yaml"), kScript);
    env_ = {{"MAESTRO_DATA_DIR", data()},
            {"MAESTRO_LISTEN", "127.0.0.1:" + std::to_string(port_)},
            {"MAESTRO_ADMIN_TOKEN", "tok"},
            {"MAESTRO_DEMO_SCRIPT", dir_.File("script.yaml")}};
  }

  std::string data() const { return dir_.File("data"); }
  std::string db() const { return data() + "/maestro.db"; }

  Ran Maestro(std::vector<std::string> args) {
    args.insert(args.begin(), {MAESTRO_BIN, "--config", config_});
    auto [code, out] = testing::RunCommand(args, env_, dir_.File("cmd"));
    return {code, out};
  }

  std::unique_ptr<Process> StartServe() {
    auto p = std::make_unique<Process>(
        std::vector<std::string>{MAESTRO_BIN, "--config", config_, "serve"}, env_,
        dir_.File("serve.out"), dir_.File("serve.err"));
    httplib::Client cli("127.0.0.1", port_);
    for (int i = 0; i < 1000; ++i) {
      if (auto r = cli.Get("/api/health"); r && r->status == 200) return p;
      if (!p->running()) break;
      std::this_thread::sleep_for(10ms);
    }
    ADD_FAILURE() << "maestro serve did not come up:\n" << p->Stderr();
    return p;
  }

  void StopServe(Process& p) {
    p.Signal(SIGTERM);
    auto code = p.Wait(20s);
    ASSERT_TRUE(code.has_value()) << "serve did not stop on SIGTERM";
    EXPECT_EQ(*code, 0) << p.Stderr();
  }

  httplib::Client Client() {
    httplib::Client c("127.0.0.1", port_);
    c.set_bearer_token_auth("tok");
    return c;
  }

  // POSTs a task; its id once the server answered 201 (it is committed).
  std::string CreateTask(const std::string& instruction) {
    Json body = {{"instruction", instruction}, {"piece", "chat"}};
    auto r = Client().Post("/api/local/tasks", body.dump(), "application/json");
    if (!r || r->status != 201) return "";
    return Json::parse(r->body)["task"]["id"];
  }

  // id -> status of every task the server lists.
  std::map<std::string, std::string> ListStatuses() {
    std::map<std::string, std::string> out;
    auto r = Client().Get("/api/local/tasks");
    if (!r || r->status != 200) return out;
    Json listed = Json::parse(r->body);
    for (const auto& t : listed["tasks"]) out[t["id"]] = t["status"];
    return out;
  }

  std::string WaitForEnd(const std::string& id) {
    std::string status;
    for (int i = 0; i < 400; ++i) {
      auto r = Client().Get("/api/local/tasks/" + id);
      if (r && r->status == 200) {
        status = Json::parse(r->body)["task"]["status"];
        if (status == "succeeded" || status == "failed" || status == "cancelled") break;
      }
      std::this_thread::sleep_for(25ms);
    }
    return status;
  }

  // A database of `n` tasks made offline (`task create --db`) and its
  // backup at `out`.
  void MakeBackup(int n, const std::string& out) {
    for (int i = 0; i < n; ++i) {
      auto made = Maestro({"task", "create", "--db", data(), "backup-drill offline"});
      ASSERT_EQ(made.code, 0) << made.out;
    }
    auto b = Maestro({"backup", out});
    ASSERT_EQ(b.code, 0) << b.out;
  }

  int64_t TaskCount(const std::string& path) {
    sqlite3* h = nullptr;
    int64_t n = -1;
    if (sqlite3_open_v2(path.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
      sqlite3_stmt* s = nullptr;
      if (sqlite3_prepare_v2(h, "SELECT COUNT(*) FROM tasks", -1, &s, nullptr) == SQLITE_OK &&
          sqlite3_step(s) == SQLITE_ROW) {
        n = sqlite3_column_int64(s, 0);
      }
      sqlite3_finalize(s);
    }
    sqlite3_close(h);
    return n;
  }

  static void Exec(const std::string& path, const std::string& sql) {
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &h), SQLITE_OK);
    char* err = nullptr;
    int rc = sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &err);
    std::string msg = err ? err : "";
    sqlite3_free(err);
    sqlite3_close(h);
    ASSERT_EQ(rc, SQLITE_OK) << msg;
  }

  testing::TempDir dir_;
  int port_ = 0;
  std::string config_;
  std::map<std::string, std::string> env_;
};

TEST_F(BackupRestoreTest, BackupTakenWhileTasksRunRestoresEveryCommittedTask) {
  auto serve = StartServe();
  std::mutex mu;
  std::vector<std::string> committed;  // ids the server answered 201 for, in order
  std::atomic<bool> stop{false};
  std::thread creator([&] {
    for (int i = 0; !stop; ++i) {
      std::string id = CreateTask("backup-drill " + std::to_string(i));
      if (!id.empty()) {
        std::lock_guard<std::mutex> lock(mu);
        committed.push_back(id);
      }
      std::this_thread::sleep_for(15ms);
    }
  });
  auto committed_count = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return committed.size();
  };
  while (committed_count() < 5) std::this_thread::sleep_for(10ms);

  // Three backups while tasks are created and run. Before each: what was
  // committed (and which had ended, with their status) when it started.
  std::vector<std::string> before;
  std::map<std::string, std::string> ended_before;
  size_t during_backups = 0;  // tasks the server committed while a backup ran
  std::string last;
  for (int round = 0; round < 3; ++round) {
    std::this_thread::sleep_for(200ms);
    ended_before.clear();
    for (const auto& [id, status] : ListStatuses()) {
      if (status == "succeeded" || status == "failed" || status == "cancelled") {
        ended_before[id] = status;
      }
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      before = committed;
    }
    last = dir_.File("backup-" + std::to_string(round) + ".db");
    const size_t at_start = committed_count();
    auto b = Maestro({"backup", last});
    ASSERT_EQ(b.code, 0) << b.out;
    during_backups += committed_count() - at_start;
    EXPECT_NE(b.out.find("wrote " + last + ": "), std::string::npos) << b.out;
    EXPECT_NE(b.out.find("schema version"), std::string::npos) << b.out;
    EXPECT_NE(b.out.find("admin_token"), std::string::npos) << "says what is not in it: " << b.out;
    EXPECT_GE(TaskCount(last), static_cast<int64_t>(before.size()));
  }
  // The server kept committing during the backups.
  const size_t at_last_backup = before.size();
  std::this_thread::sleep_for(200ms);
  EXPECT_GT(committed_count(), at_last_backup);
  EXPECT_GT(during_backups, 0u) << "the server kept committing while the backups copied";
  EXPECT_GT(ended_before.size(), 0u) << "some tasks had finished before the last backup";

  // Restore refuses while serve has the database open, and changes nothing.
  auto refused = Maestro({"restore", "--force", last});
  EXPECT_EQ(refused.code, 1) << refused.out;
  EXPECT_NE(refused.out.find("open in a running maestro"), std::string::npos) << refused.out;
  EXPECT_FALSE(fs::exists(db() + ".restore-tmp"));
  EXPECT_FALSE(CreateTask("backup-drill while refused").empty()) << "serve still works";

  stop = true;
  creator.join();
  StopServe(*serve);
  const size_t total = committed.size();

  // Wipe the database; restore the last backup; start again.
  for (const char* f : {"", "-wal", "-shm"}) fs::remove(db() + f);
  auto restored = Maestro({"restore", last});
  ASSERT_EQ(restored.code, 0) << restored.out;
  EXPECT_NE(restored.out.find("restored " + last + " to " + db()), std::string::npos)
      << restored.out;
  serve = StartServe();
  auto now = ListStatuses();
  EXPECT_LT(now.size(), total) << "the tasks created after the backup are not in it";
  for (const auto& id : before) {
    auto r = Client().Get("/api/local/tasks/" + id);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << "task " << id << " committed before the backup is missing";
  }
  for (const auto& [id, status] : ended_before) {
    auto r = Client().Get("/api/local/tasks/" + id);
    ASSERT_TRUE(r && r->status == 200) << id;
    EXPECT_EQ(Json::parse(r->body)["task"]["status"], status) << id;
  }
  // The restored server works: a new task runs to its end.
  std::string fresh = CreateTask("backup-drill after the restore");
  ASSERT_FALSE(fresh.empty());
  EXPECT_EQ(WaitForEnd(fresh), "succeeded") << serve->Stderr();
  std::cout << "[drill] " << total << " tasks committed, " << during_backups
            << " of them while one of 3 backups ran; the " << at_last_backup
            << " committed before the last backup started (" << ended_before.size()
            << " finished) all restored\n";
}

TEST_F(BackupRestoreTest, RestoreRefusesWhatIsNotAMaestroDatabase) {
  const std::string good = dir_.File("good.db");
  MakeBackup(2, good);
  ASSERT_EQ(TaskCount(db()), 2);

  // A 4 GiB file of anything else (sparse: made at once) is refused by its
  // header before a byte is copied — copying it would take many seconds.
  WriteFile(dir_.File("big.txt"), "not a database at all\n");
  fs::resize_file(dir_.File("big.txt"), 4ull << 30);
  auto t0 = std::chrono::steady_clock::now();
  auto text = Maestro({"restore", "--force", dir_.File("big.txt")});
  auto took =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  EXPECT_EQ(text.code, 2) << text.out;
  EXPECT_NE(text.out.find("not a SQLite database"), std::string::npos) << text.out;
  EXPECT_LT(took, 3s) << "the header is checked before anything is copied";
  EXPECT_FALSE(fs::exists(db() + ".restore-tmp"));
  std::cout << "[refuse] a 4 GiB non-SQLite file refused in " << took.count() << " ms\n";
  fs::remove(dir_.File("big.txt"));

  // A symlink to a good backup, a FIFO, a directory: not regular files.
  fs::create_symlink(good, dir_.File("link.db"));
  ASSERT_EQ(mkfifo(dir_.File("fifo.db").c_str(), 0600), 0);
  for (const char* name : {"link.db", "fifo.db"}) {
    auto r = Maestro({"restore", "--force", dir_.File(name)});
    EXPECT_EQ(r.code, 2) << name << ": " << r.out;
    EXPECT_NE(r.out.find("not a regular file"), std::string::npos) << r.out;
  }

  // A SQLite database that is not maestro's.
  Exec(dir_.File("other.db"), "CREATE TABLE notes(body TEXT)");
  auto other = Maestro({"restore", "--force", dir_.File("other.db")});
  EXPECT_EQ(other.code, 2) << other.out;
  EXPECT_NE(other.out.find("not a maestro database"), std::string::npos) << other.out;

  // A maestro database from a newer maestro: refused naming both versions.
  fs::copy_file(good, dir_.File("newer.db"));
  Exec(dir_.File("newer.db"),
       "INSERT INTO schema_migrations(version, name, applied_at) VALUES (999, 'future', 0)");
  auto newer = Maestro({"restore", "--force", dir_.File("newer.db")});
  EXPECT_EQ(newer.code, 2) << newer.out;
  EXPECT_NE(newer.out.find("schema version 999, newer than this maestro's"), std::string::npos)
      << newer.out;

  // A backup with a corrupted page fails integrity_check.
  fs::copy_file(good, dir_.File("torn.db"));
  {
    std::string bytes = ReadWholeFile(dir_.File("torn.db"));
    ASSERT_GT(bytes.size(), 8192u);
    for (size_t i = 4096; i < 8192; ++i) bytes[i] = static_cast<char>(0xA5);
    WriteFile(dir_.File("torn.db"), bytes);
  }
  auto torn = Maestro({"restore", "--force", dir_.File("torn.db")});
  EXPECT_EQ(torn.code, 2) << torn.out;
  EXPECT_NE(torn.out.find("not a maestro database"), std::string::npos) << torn.out;

  // Nothing of it touched the database or left a temp file.
  EXPECT_EQ(TaskCount(db()), 2);
  EXPECT_FALSE(fs::exists(db() + ".restore-tmp"));

  // The good backup over a database with tasks needs --force.
  Maestro({"task", "create", "--db", data(), "backup-drill third"});
  ASSERT_EQ(TaskCount(db()), 3);
  auto unforced = Maestro({"restore", good});
  EXPECT_EQ(unforced.code, 2) << unforced.out;
  EXPECT_NE(unforced.out.find("holds 3 task(s); pass --force"), std::string::npos) << unforced.out;
  EXPECT_EQ(TaskCount(db()), 3);
  auto forced = Maestro({"restore", "--force", good});
  EXPECT_EQ(forced.code, 0) << forced.out;
  EXPECT_NE(forced.out.find("replaced a database of 3 task(s)"), std::string::npos) << forced.out;
  EXPECT_EQ(TaskCount(db()), 2);
}

TEST_F(BackupRestoreTest, BackupRefusesAnExistingOutWithoutForce) {
  MakeBackup(1, dir_.File("first.db"));
  WriteFile(dir_.File("keep.txt"), "operator's file");
  auto refused = Maestro({"backup", dir_.File("keep.txt")});
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_NE(refused.out.find("exists; pass --force"), std::string::npos) << refused.out;
  EXPECT_EQ(ReadWholeFile(dir_.File("keep.txt")), "operator's file");
  EXPECT_FALSE(fs::exists(dir_.File("keep.txt.tmp")));

  auto forced = Maestro({"backup", "--force", dir_.File("keep.txt")});
  EXPECT_EQ(forced.code, 0) << forced.out;
  EXPECT_EQ(ReadWholeFile(dir_.File("keep.txt")).substr(0, 15), "SQLite format 3");
  EXPECT_EQ(TaskCount(dir_.File("keep.txt")), 1);
  EXPECT_FALSE(fs::exists(dir_.File("keep.txt.tmp")));
  EXPECT_FALSE(fs::exists(dir_.File("keep.txt-wal"))) << "one self-contained file";

  // No database yet: a clear error, nothing written.
  env_["MAESTRO_DATA_DIR"] = dir_.File("empty");
  auto none = Maestro({"backup", dir_.File("none.db")});
  EXPECT_EQ(none.code, 1) << none.out;
  EXPECT_NE(none.out.find("no database at"), std::string::npos) << none.out;
  EXPECT_FALSE(fs::exists(dir_.File("none.db")));
}

TEST_F(BackupRestoreTest, RestoreUnlinksPlantedSideFilesNeverTheirTargets) {
  const std::string good = dir_.File("good.db");
  MakeBackup(1, good);
  for (const char* f : {"", "-wal", "-shm"}) fs::remove(db() + f);
  // An agent-made link at each side file, pointing at a host file.
  for (const char* side : {"-wal", "-shm", "-journal"}) {
    WriteFile(dir_.File(std::string("target") + side), "host data");
    fs::create_symlink(dir_.File(std::string("target") + side), db() + side);
  }
  fs::create_symlink(dir_.File("target-tmp"), db() + ".restore-tmp");
  auto r = Maestro({"restore", good});
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* side : {"-wal", "-shm", "-journal"}) {
    EXPECT_EQ(ReadWholeFile(dir_.File(std::string("target") + side)), "host data") << side;
    EXPECT_FALSE(fs::is_symlink(db() + side)) << side;
  }
  EXPECT_FALSE(fs::exists(dir_.File("target-tmp"))) << "the temp file was not written through";
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(db())));
  EXPECT_EQ(TaskCount(db()), 1);

  // A symlink at maestro.db itself is refused; its target stays as it was.
  fs::remove(db());
  WriteFile(dir_.File("target-db"), "host database");
  fs::create_symlink(dir_.File("target-db"), db());
  auto link = Maestro({"restore", "--force", good});
  EXPECT_EQ(link.code, 2) << link.out;
  EXPECT_NE(link.out.find("not a regular file"), std::string::npos) << link.out;
  EXPECT_EQ(ReadWholeFile(dir_.File("target-db")), "host database");
}

TEST_F(BackupRestoreTest, PostgresPrintsTheProcedureAndExits2) {
  env_["MAESTRO_DATABASE_URL"] = "postgresql://maestro@127.0.0.1:1/maestro";
  for (const char* cmd : {"backup", "restore"}) {
    WriteFile(dir_.File("x.db"), "");
    auto r = Maestro({cmd, "--force", dir_.File("x.db")});
    EXPECT_EQ(r.code, 2) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("do not back up or restore"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("pg_dump"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("then snapshot the shared data dir"), std::string::npos) << r.out;
    EXPECT_EQ(ReadWholeFile(dir_.File("x.db")), "") << "nothing written";
  }
}

}  // namespace
}  // namespace maestro
