// EngineRig: the real job path of the engine integration tests — SqliteStore,
// a registered space, the builtin tool registry (RunCommand unavailable),
// the builtin piece catalog, a PieceExecutor whose LLM is an HttpLlmClient
// pointed at a maestro-fakellm URL, and a one-thread WorkerPool woken on
// every enqueue. Tests own the fake (its script is theirs) and the files.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "engine/job/piece_executor.h"
#include "sandbox/sandbox.h"
#include "store/sqlite/sqlite_store.h"
#include "tools/builtin.h"
#include "worker/worker_pool.h"

namespace maestro::engine::test {

class EngineRig {
 public:
  // `dir` holds the database, the data dir and the space `space`.
  // `tune` may change the executor's options before it is built.
  void Start(const std::string& dir, const tools::Space& space, const std::string& llm_url,
             int64_t context_length,
             const std::function<void(PieceExecutorOptions&)>& tune = nullptr) {
    StoreOptions so;
    so.on_job_available = [this] {
      if (pool_) pool_->Notify();
    };
    auto st = SqliteStore::Open(dir + "/maestro.db", so);
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    store_ = std::move(st).value();
    ASSERT_TRUE(spaces_.Register(space).ok());
    auto reg = tools::NewBuiltinRegistry(
        std::make_shared<tools::Sandbox>(tools::Sandbox::Unavailable("test")));
    ASSERT_TRUE(reg.ok());
    registry_ = std::move(reg).value();
    catalog_ = std::make_unique<PieceCatalog>(PieceCatalog::Load({}));
    PieceExecutorOptions o;
    o.store = store_.get();
    o.catalog = catalog_.get();
    o.registry = registry_.get();
    o.spaces = &spaces_;
    o.workspace.data_dir = dir;
    o.data_dir = dir;
    o.llm_factory =
        [llm_url, context_length](const std::string&) -> Result<std::unique_ptr<llm::LlmClient>> {
      llm::ModelProfile p;
      p.base_url = llm_url;
      p.model = "fake";
      p.context_length = context_length;
      return std::unique_ptr<llm::LlmClient>(std::make_unique<llm::HttpLlmClient>(p));
    };
    if (tune) tune(o);
    executor_ = std::make_unique<PieceExecutor>(std::move(o));
    WorkerPoolOptions wo;
    wo.threads = 1;
    wo.worker_id_prefix = "test";
    pool_ = std::make_unique<WorkerPool>(*store_, *executor_, wo);
    pool_->Start();
  }

  ~EngineRig() {
    if (pool_) pool_->Shutdown();
  }

  // Polls until the job is terminal or parked and the worker is done with
  // it (its context directory moved on after the commit; 60 s at most).
  Job WaitForEnd(const std::string& job_id) {
    for (int i = 0; i < 600; ++i) {
      auto j = store_->GetJob(job_id);
      if (j.ok() && (IsTerminal(j->status) || IsParked(j->status)) && !pool_->Holds(job_id)) {
        return *j;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "job " << job_id << " did not end";
    return {};
  }

  SqliteStore& store() { return *store_; }
  WorkerPool& pool() { return *pool_; }

 private:
  std::unique_ptr<SqliteStore> store_;
  tools::SpaceRegistry spaces_;
  std::unique_ptr<tools::ToolRegistry> registry_;
  std::unique_ptr<PieceCatalog> catalog_;
  std::unique_ptr<PieceExecutor> executor_;
  std::unique_ptr<WorkerPool> pool_;  // declared last: stopped first
};

}  // namespace maestro::engine::test
