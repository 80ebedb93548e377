#include "support/store_fixture.h"

#include "store/postgres/pg_store.h"
#include "store/sqlite/sqlite_store.h"
#include "support/pg_server.h"

namespace maestro::testing {

Result<std::unique_ptr<SqlStore>> StoreTest::OpenAnother(StoreOptions o) {
  if (backend_ == StoreBackend::kPostgres) {
    PgStoreOptions po;
    po.url = pg_url_;
    auto s = PgStore::Open(po, std::move(o));
    if (!s.ok()) return s.status();
    return std::unique_ptr<SqlStore>(std::move(s).value());
  }
  auto s = SqliteStore::Open(dir_.File("maestro.db"), std::move(o));
  if (!s.ok()) return s.status();
  return std::unique_ptr<SqlStore>(std::move(s).value());
}

std::pair<Job, std::vector<Job>> StoreTest::ParentWithChildren(int n) {
  NewTaskWith("park-subtasks");
  Job parent = Claim("parent-worker");
  std::vector<Job> children;
  for (int i = 0; i < n; ++i) {
    NewTask t;
    t.instruction = "child " + std::to_string(i);
    t.piece = "ok";
    t.parent_job_id = parent.id;
    auto c = store_->CreateTask(t);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (c.ok()) children.push_back(c->job);
  }
  return {parent, children};
}

int StoreTest::QueuedEventsFromWaiting(const std::string& task_id) {
  auto events = store_->ListEvents(task_id, "", 1000);
  EXPECT_TRUE(events.ok()) << events.status().ToString();
  if (!events.ok()) return 0;
  int n = 0;
  for (const auto& e : *events) {
    n += e.type == "job.status" && e.payload["from"] == "waiting_subtasks" &&
         e.payload["to"] == "queued";
  }
  return n;
}

void StoreTest::Reopen() {
  store_.reset();
  StoreOptions o;
  o.clock = &clock_;
  o.default_max_attempts = 3;
  o.on_job_available = [this] { ++wakeups_; };
  auto s = OpenAnother(o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  store_ = std::move(s).value();
}

void StoreConformance::SetUp() {
  backend_ = GetParam();
  if (backend_ == StoreBackend::kPostgres) {
    PgServer* pg = PgServer::Shared();
    if (pg == nullptr) {
      if (PgServer::Required()) {
        FAIL() << "PostgreSQL is required (TEST_REQUIRE_POSTGRES=1) but could not start: "
               << PgServer::SkipReason();
      }
      GTEST_SKIP() << "PostgreSQL could not start, its half of the store conformance suite "
                      "is SKIPPED: "
                   << PgServer::SkipReason();
    }
    auto url = pg->CreateDatabase();
    ASSERT_TRUE(url.ok()) << url.status().ToString();
    pg_url_ = *url;
  }
  StoreTest::SetUp();
}

std::string BackendName(const ::testing::TestParamInfo<StoreBackend>& info) {
  return info.param == StoreBackend::kPostgres ? "postgres" : "sqlite";
}

}  // namespace maestro::testing
