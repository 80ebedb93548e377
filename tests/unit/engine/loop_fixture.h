// LoopTest: the fixture of the agent-loop tests (agent loop, delegate, prompt
// guard). SetUpLoop() creates a task of one builtin piece in a real
// SqliteStore and claims its job, registers a ReadFile stand-in (answered by
// the test's handler) and the park tools, starts a real TaskContext whose
// conversation holds a system message and the task, and writes the piece's
// tools file, and fills services_ and scope_ with all of it and a ScriptedLlm;
// Deps() gives the job's own loop over them.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "context/task_context.h"
#include "engine/loop/movement_runner.h"
#include "engine/piece/piece_tools.h"
#include "engine/prompt/prompt_builder.h"
#include "engine_test_util.h"
#include "support/scripted_llm.h"
#include "support/store_fixture.h"
#include "test_tools.h"
#include "tools/park_tools.h"

namespace maestro::engine::test {

inline Json SystemMessage() { return {{"role", "system"}, {"content", "You are maestro."}}; }

class LoopTest : public maestro::testing::StoreTest {
 protected:
  struct LoopSetup {
    std::string piece = "coding";
    tools::ToolHandler read_file;  // answers the ReadFile stand-in
    // The regular tools offered, by name, from the registry (ReadFile, the
    // park tools, delegate).
    std::set<std::string> tools = {"ReadFile"};
    std::vector<Json> extra_tools;                 // definitions offered besides those
    std::set<std::string> allowed = {"ReadFile"};  // the movement policy
    int64_t context_length = 100'000;
  };

  void SetUpLoop(LoopSetup s) {
    StoreTest::SetUp();
    created_ = NewTaskWith(s.piece);
    job_ = Claim();
    ASSERT_TRUE(RegisterTestReadFile(registry_, std::move(s.read_file)).ok());
    ASSERT_TRUE(tools::RegisterParkTools(registry_).ok());
    piece_ = Builtin(s.piece);
    std::vector<Json> defs = Defs(registry_.ToolsArray(s.tools));
    defs.insert(defs.end(), s.extra_tools.begin(), s.extra_tools.end());
    auto t = BuildPieceTools(piece_, defs);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    tools_ = *t;
    auto task = store_->GetTask(created_.task.id);
    ASSERT_TRUE(task.ok());
    dirs_ = std::make_unique<context::ContextDirs>(dir_.path());
    cc_.context_length = s.context_length;
    auto ctx = context::TaskContext::Start(*dirs_, {store_.get(), &clock_}, *task, job_, cc_);
    ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
    ctx_ = std::move(ctx).value();
    tools_path_ = ctx_->dir() + "/tools.json";
    std::ofstream(tools_path_) << tools_.bytes;
    ASSERT_TRUE(ctx_->messages().StartThread(job_.id, SystemMessage()).ok());
    ASSERT_TRUE(ctx_->messages().AddMessage(UserMessage("# Task\nfix the bug"), job_.id).ok());
    services_.llm = &llm_;
    services_.store = store_.get();
    services_.dispatcher = &dispatcher_;
    services_.on_delta = [this](const std::string&, const Json& delta) {
      deltas_.push_back(delta);
    };
    scope_.task_id = created_.task.id;
    scope_.job_id = job_.id;
    scope_.workspace_root = dir_.path();
    scope_.policy.allowed_tools = s.allowed;
  }

  // Deps of the job's own loop over the fixture's services_ and scope_ (a
  // test changes those, e.g. scope_.limits, before or after this call).
  AgentLoopDeps Deps() {
    return {services_, scope_,
            LoopState{.ctx = ctx_.get(),
                      .piece = &piece_,
                      .piece_tools = &tools_,
                      .tools_path = tools_path_}};
  }

  Store::CreatedTask created_;
  Job job_;
  tools::ToolRegistry registry_;
  tools::Dispatcher dispatcher_{&registry_, tools::ToolAuthorizer(nullptr)};
  Piece piece_;
  PieceTools tools_;
  context::ContextConfig cc_;
  std::unique_ptr<context::ContextDirs> dirs_;
  std::unique_ptr<context::TaskContext> ctx_;
  std::string tools_path_;
  maestro::testing::ScriptedLlm llm_;
  std::vector<Json> deltas_;
  LoopServices services_;  // llm_, store_, dispatcher_, deltas_
  JobScope scope_;         // the claimed job; no cancel token, ledger or budget
};

}  // namespace maestro::engine::test
