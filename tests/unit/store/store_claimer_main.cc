// store_claimer: one claiming process for the multi-process conformance
// test (multiprocess_claim_test.cc). Opens the store named by its argument
// (a SQLite file, or a postgresql:// URL), waits for the start file so all
// claimers begin together, then claims and finishes jobs until the queue
// stays empty, printing each claimed job id on its own line. Exit 0 when
// every call succeeded.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include "store/postgres/pg_store.h"
#include "store/sqlite/sqlite_store.h"

int main(int argc, char** argv) {
  using namespace maestro;
  if (argc != 4) {
    std::fprintf(stderr,
                 "usage: store_claimer <db path|postgresql url> <worker id> <start file>\n");
    return 2;
  }
  const std::string target = argv[1], worker = argv[2], start_file = argv[3];
  Result<std::unique_ptr<SqlStore>> store = Unavailable("not opened");
  if (target.rfind("postgresql://", 0) == 0) {
    PgStoreOptions po;
    po.url = target;
    po.pool_size = 2;
    po.notify = false;  // this process only claims; polling is what it does
    auto s = PgStore::Open(po, StoreOptions{});
    store = s.ok() ? Result<std::unique_ptr<SqlStore>>(std::move(s).value()) : s.status();
  } else {
    auto s = SqliteStore::Open(target, StoreOptions{});
    store = s.ok() ? Result<std::unique_ptr<SqlStore>>(std::move(s).value()) : s.status();
  }
  if (!store.ok()) {
    std::fprintf(stderr, "open: %s\n", store.status().ToString().c_str());
    return 1;
  }
  while (!std::filesystem::exists(start_file)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ClaimFilter f;
  f.worker_id = worker;
  f.process_id = getpid();
  int errors = 0, idle = 0;
  while (idle < 100) {
    auto c = (*store)->ClaimNextJob(f, 60'000);
    if (!c.ok()) {
      std::fprintf(stderr, "claim: %s\n", c.status().ToString().c_str());
      ++errors;
      continue;
    }
    if (!c->has_value()) {
      ++idle;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    idle = 0;
    const Job& j = **c;
    std::printf("%s\n", j.id.c_str());
    Status st =
        (*store)->FinishJob(Lease{j.id, j.worker_id, j.fencing_token}, JobOutcome::Succeeded("ok"));
    if (!st.ok()) {
      std::fprintf(stderr, "finish %s: %s\n", j.id.c_str(), st.ToString().c_str());
      ++errors;
    }
  }
  std::fflush(stdout);
  return errors == 0 ? 0 : 1;
}
