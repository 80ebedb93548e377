// Workers killed at random while many tasks run (pg_cluster.h): PostgreSQL,
// `maestro serve --workers 0`, three `maestro worker` processes and the fake
// LLM. 200 tasks of mixed shapes (task_shapes.h: a plain answer, WriteFile
// then an answer, an ASK answered by a comment, a tool approval decided via
// the API, a subtask) run while a random worker is killed with SIGKILL 20
// times at random moments and started again at once (three stay alive).
// Short leases (lease_ms 2000) let the sweeper hand a dead worker's jobs on.
// The test plays the people: it answers each ASK, approves each tool
// request, and settles each `reconcile` park (a kill that left a
// side-effecting call started but unfinished: docs/tools.md) with a comment.
//
// Afterwards, from the API alone: every task ended as scripted (status and
// final answer; the written file is there), no job ran twice at once (from
// each task's job.status events: a claim only after the previous attempt
// ended or was recovered, every transition starting where the last one
// ended, at most one running job per task at any time), every answering
// comment (answers, settlements) is in the task's comments once, was
// delivered and reached the model, and every tool request was decided once.
//
// MAESTRO_SCALEOUT_SEED=<n> replays a run's kill schedule (the seed is
// printed); MAESTRO_SCALEOUT_TASKS=<n> changes the number of tasks.
#include <cstdlib>
#include <random>
#include <set>
#include <sstream>

#include "pg_cluster.h"
#include "task_shapes.h"

namespace maestro::testing {
namespace {

namespace sh = shapes;

enum class Shape { kPlain, kWrite, kAsk, kApproval, kSubtask };

struct Planned {
  int n = 0;
  Shape shape = Shape::kPlain;
  std::string tag, task_id;
  bool answered = false;               // the ASK's comment was posted
  int decisions = 0;                   // approvals posted
  std::vector<std::string> comments;   // markers of every comment posted
  std::set<std::string> settled_jobs;  // `reconcile` parks settled by a comment

  std::string Suffix() const { return std::to_string(n); }
  std::string Answer() const { return "answer-" + Suffix(); }
  std::string ChildTag() const { return "<<C" + Suffix() + ">>"; }
  std::string ChildAnswer() const { return "child-" + Suffix(); }
  std::string File() const { return "out-" + Suffix() + ".txt"; }
  std::string ReplyMarker() const { return "ANSWER-" + Suffix() + "-"; }
  std::string Out() const { return "OUT-" + Suffix(); }
  std::string SettledMarker() const { return "SETTLED-" + Suffix() + "-"; }
};

// Of every 20 tasks: 6 plain, 5 WriteFile, 4 ASK, 3 approvals, 2 subtasks.
Shape ShapeOf(int n) {
  const int k = n % 20;
  if (k < 6) return Shape::kPlain;
  if (k < 11) return Shape::kWrite;
  if (k < 15) return Shape::kAsk;
  if (k < 18) return Shape::kApproval;
  return Shape::kSubtask;
}

Json RepliesFor(const Planned& p) {
  switch (p.shape) {
    case Shape::kPlain:
      return sh::Plain(p.tag, p.Answer());
    case Shape::kWrite:
      return sh::WriteThenAnswer(p.tag, p.File(), p.Answer());
    case Shape::kAsk:
      return sh::AskThenAnswer(p.tag, "Which size?", p.ReplyMarker(), p.Answer());
    case Shape::kApproval:
      return sh::ApprovedCommand(p.tag, p.Out(), p.Answer(), p.SettledMarker());
    case Shape::kSubtask:
      return sh::WithSubtask(p.tag, p.ChildTag(), p.ChildAnswer(), p.Answer());
  }
  return Json::array();
}

constexpr int kLlmDelayMs = 250;

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

// How many lines of `text` (MessagesText: one message a line) hold `needle`.
int Lines(const std::string& text, const std::string& needle) {
  int n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) n += Contains(line, needle) ? 1 : 0;
  return n;
}

class ScaleoutKillTest : public PgClusterTest {
 protected:
  // Checks one task's job.status events (ordered by id = commit order):
  // each transition starts where the job's previous one ended, a job is
  // claimed (→ running) only when it is not running, each claim is the next
  // attempt, and at most one job of the task runs at a time.
  void CheckNoOverlap(const std::string& label, const Json& events) {
    std::map<std::string, std::string> state;  // job → its status after the last event
    std::map<std::string, int64_t> attempts;   // job → attempt of its last claim
    int running = 0;
    for (const auto& e : events) {
      if (e["type"] != "job.status") continue;
      const Json& p = e["payload"];
      const std::string job = p["job_id"], from = p["from"], to = p["to"];
      auto it = state.find(job);
      if (it != state.end()) {
        EXPECT_EQ(from, it->second) << label << ": job " << job << " event " << e["id"]
                                    << " leaves " << from << " but the job was " << it->second;
      }
      const std::string before = it != state.end() ? it->second : from;
      if (to == "running") {
        EXPECT_NE(before, "running") << label << ": job " << job << " claimed while running";
        const int64_t attempt = p.value("attempt", int64_t{0});
        EXPECT_EQ(attempt, attempts[job] + 1) << label << ": job " << job << " event " << e["id"];
        attempts[job] = attempt;
        ++running;
        EXPECT_LE(running, 1) << label << ": two jobs of the task running at event " << e["id"];
      }
      if (before == "running" && to != "running") --running;
      if (before == "running" && to == "retry") ++recovered_;
      state[job] = to;
    }
    ++checked_;
  }

  int checked_ = 0;
  int recovered_ = 0;  // running → retry: a killed worker's job moved on
};

TEST_F(ScaleoutKillTest, TwoHundredTasksSurviveTwentyWorkerKills) {
  const int task_count = EnvInt("MAESTRO_SCALEOUT_TASKS", 200);
  const int kill_count = 20;
  const unsigned seed = static_cast<unsigned>(
      EnvInt("MAESTRO_SCALEOUT_SEED", static_cast<int>(std::random_device{}())));
  std::cout << "MAESTRO_SCALEOUT_SEED=" << seed << std::endl;
  RecordProperty("seed", static_cast<int>(seed));

  std::vector<Planned> plan(static_cast<size_t>(task_count));
  Json replies = Json::array();
  for (int n = 0; n < task_count; ++n) {
    Planned& p = plan[static_cast<size_t>(n)];
    p.n = n;
    p.shape = ShapeOf(n);
    p.tag = "<<T" + std::to_string(n) + ">>";
    // Each LLM call takes a while, so that kills find jobs mid-call.
    for (Json r : RepliesFor(p)) {
      r["delay_ms"] = kLlmDelayMs;
      replies.push_back(r);
    }
  }
  // Leases short enough that a killed worker's jobs move on within ~2 s,
  // long enough that a busy (ASan, 2 cores) worker keeps heartbeating.
  // Every kill costs the jobs it held an attempt: allow plenty.
  max_attempts_ = 100;
  StartCluster(replies, 3, 3, "  lease_ms: 2000\n  heartbeat_ms: 250\n  sweep_interval_ms: 200\n");
  ASSERT_FALSE(HasFatalFailure());
  const auto t0 = std::chrono::steady_clock::now();

  std::map<std::string, Planned*> by_task;
  for (auto& p : plan) {
    Json c = Create(p.tag + " task " + p.Suffix());
    ASSERT_TRUE(c["task"].contains("id")) << c.dump();
    p.task_id = c["task"]["id"];
    by_task[p.task_id] = &p;
  }
  const auto created_at = std::chrono::steady_clock::now();

  // The driver, one loop: kills a random worker at random moments (20
  // times, each restarted at once); answers ASKs and approves tool requests
  // as they park; finds the subtasks (tasks not planned) among the newest
  // tasks; stops once every kill is done and no task is active (twice in a
  // row: the status lists are not one snapshot).
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pause_ms(200, 1500), which(0, 2);
  auto next_kill = std::chrono::steady_clock::now() + std::chrono::milliseconds(pause_ms(rng));
  int kills = 0;
  std::set<std::string> children;
  auto find_children = [&] {
    const Json newest = Get("/api/local/tasks")["tasks"];
    for (const auto& t : newest) {
      if (!by_task.count(t["id"])) children.insert(t["id"].get<std::string>());
    }
  };
  const auto deadline = t0 + 240s;
  int quiet_rounds = 0;
  for (int round = 0; std::chrono::steady_clock::now() < deadline; ++round) {
    if (kills < kill_count && std::chrono::steady_clock::now() >= next_kill) {
      RestartWorker(which(rng));
      ASSERT_FALSE(HasFatalFailure());
      ++kills;
      next_kill = std::chrono::steady_clock::now() + std::chrono::milliseconds(pause_ms(rng));
    }
    const Json waiting = Get("/api/local/tasks?status=waiting_human")["tasks"];
    for (const auto& t : waiting) {
      auto it = by_task.find(t["id"]);
      if (it == by_task.end()) continue;
      Planned& p = *it->second;
      const Json job = Get("/api/local/tasks/" + p.task_id)["latest_job"];
      if (job.value("status", "") != "waiting_human") continue;  // moved on meanwhile
      const std::string reason = job["wait_reason"], job_id = job["id"];
      auto comment = [&](const std::string& marker, const std::string& text) {
        auto [code, body] =
            Post("/api/local/tasks/" + p.task_id + "/comments", {{"body", marker + " " + text}});
        EXPECT_EQ(code, 201) << body.dump();
        EXPECT_EQ(body["outcome"], "followup") << body.dump();
        if (code == 201) p.comments.push_back(marker);
        return code == 201;
      };
      if (reason == "ask" && p.shape == Shape::kAsk && !p.answered) {
        p.answered = comment(p.ReplyMarker(), "large");
      } else if (reason == "reconcile" && !p.settled_jobs.count(job_id)) {
        // A killed worker left a side-effecting call started and unfinished:
        // a person looks and settles it (docs/tools.md).
        const std::string marker = p.SettledMarker() + std::to_string(p.settled_jobs.size()) + "-";
        if (comment(marker, "I checked: it ran, carry on")) p.settled_jobs.insert(job_id);
      } else if (reason == "tool_request") {
        const Json reqs = Get("/api/local/tasks/" + p.task_id + "/tool-requests")["requests"];
        for (const auto& r : reqs) {
          if (r["status"] != "pending") continue;
          auto [code, body] = Post("/api/local/tasks/" + p.task_id + "/tool-requests/" +
                                       r["id"].get<std::string>() + "/decide",
                                   {{"decision", "approve"}, {"scope", "once"}});
          EXPECT_EQ(code, 200) << body.dump();
          ++p.decisions;
        }
      }
    }
    if (round % 10 == 0) find_children();
    if (round % 5 == 4) {
      bool active = false;
      for (const char* st : {"queued", "running", "retry", "waiting_subtasks", "waiting_human"}) {
        active = active || !Get(std::string("/api/local/tasks?status=") + st)["tasks"].empty();
      }
      quiet_rounds = active ? 0 : quiet_rounds + 1;
      if (quiet_rounds >= 2 && kills == kill_count) break;
    }
    std::this_thread::sleep_for(150ms);
  }
  std::cout << "created " << task_count << " tasks in "
            << std::chrono::duration_cast<std::chrono::milliseconds>(created_at - t0).count()
            << " ms" << std::endl;
  const auto work_s =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - t0);
  std::cout << "tasks=" << task_count << " kills=" << kills << " ran " << work_s.count() << " s"
            << std::endl;
  ASSERT_EQ(kills, kill_count);
  if (quiet_rounds < 2) {
    // Which tasks hang, and where: the first thing to read.
    std::string stuck;
    find_children();
    std::vector<std::string> ids(children.begin(), children.end());
    for (const auto& p : plan) ids.push_back(p.task_id);
    for (const auto& id : ids) {
      Json t = Get("/api/local/tasks/" + id);
      if (t["task"]["status"] == "succeeded") continue;
      auto it = by_task.find(id);
      stuck += (it != by_task.end() ? "task " + it->second->Suffix() : "child " + id) + ": " +
               t["latest_job"].dump() + " pending=" + t["pending_requests"].dump() + "\n";
    }
    FAIL() << "tasks still active after 240 s:\n" << stuck << LogTail();
  }
  find_children();

  int settled = 0;  // `reconcile` parks settled by a comment
  // Every task ended as scripted. The fake's log, each request's messages
  // as text once (hundreds of requests, searched per task).
  std::vector<std::string> texts;
  for (const auto& r : FakeRequests()) texts.push_back(MessagesText(r));
  auto with = [&](const std::string& a, const std::string& b = "") {
    std::vector<const std::string*> out;
    for (const auto& t : texts) {
      if (Contains(t, a) && Contains(t, b)) out.push_back(&t);
    }
    return out;
  };
  for (const auto& p : plan) {
    SCOPED_TRACE("task " + p.Suffix() + " " + p.task_id);
    Json t = Get("/api/local/tasks/" + p.task_id);
    EXPECT_EQ(t["task"]["status"], "succeeded") << t["latest_job"].dump();
    EXPECT_EQ(t["latest_job"]["result"], p.Answer()) << t["latest_job"].dump();
    const Json events = EventsInOrder(p.task_id);
    CheckNoOverlap("task " + p.Suffix(), events);
    switch (p.shape) {
      case Shape::kPlain:
        break;
      case Shape::kWrite: {
        std::ifstream in(DataDir() + "/workspaces/tasks/" + p.task_id + "/" + p.File());
        std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        EXPECT_EQ(content, p.tag);
        break;
      }
      case Shape::kAsk:
        EXPECT_TRUE(p.answered);
        break;
      case Shape::kApproval: {
        // Every request decided once, as approved. One request — unless a
        // kill left the request itself unfinished and a person settled it.
        Json reqs = Get("/api/local/tasks/" + p.task_id + "/tool-requests")["requests"];
        if (p.settled_jobs.empty()) {
          EXPECT_EQ(reqs.size(), 1u) << reqs.dump();
        }
        for (const auto& r : reqs) EXPECT_EQ(r["status"], "approved") << r.dump();
        int created = 0, decided = 0;
        for (const auto& e : events) {
          created += e["type"] == "request.created";
          decided += e["type"] == "request.decided";
        }
        EXPECT_EQ(created, static_cast<int>(reqs.size()));
        EXPECT_EQ(decided, static_cast<int>(reqs.size()));
        EXPECT_EQ(p.decisions, static_cast<int>(reqs.size()));
        break;
      }
      case Shape::kSubtask: {
        // The parent answered after its child ended, with the child's result.
        bool woke = false;
        for (const std::string* t : with(p.tag, "The subtasks of this job have ended")) {
          woke = woke || Contains(*t, p.ChildAnswer());
        }
        EXPECT_TRUE(woke) << "no parent request saw " << p.ChildAnswer();
        break;
      }
    }
    // Every comment posted (ASK answers, settlements) is in the task's
    // comments once, delivered, and reached the model. An answer is in each
    // later request once; a settlement may be twice (the follow-up's
    // instruction and the settled call's note quote it).
    const Json comments = Get("/api/local/tasks/" + p.task_id + "/comments")["comments"];
    for (const auto& marker : p.comments) {
      int found = 0;
      for (const auto& cm : comments) {
        if (!Contains(cm["body"].dump(), marker)) continue;
        ++found;
        EXPECT_GT(cm.value("delivered_at", 0), 0) << cm.dump();
      }
      EXPECT_EQ(found, 1) << marker << " in the task's comments";
      const auto seen = with(marker);
      EXPECT_FALSE(seen.empty()) << marker << " never reached the model";
      const int most = marker == p.ReplyMarker() ? 1 : 2;
      for (const std::string* t : seen) EXPECT_LE(Lines(*t, marker), most) << *t;
      if (marker == p.ReplyMarker()) {
        for (const std::string* t : seen) EXPECT_EQ(Lines(*t, marker), 1) << *t;
      }
    }
    settled += static_cast<int>(p.settled_jobs.size());
  }
  // The subtasks: all found, all succeeded, none overlapping either.
  int subtask_shapes = 0;
  for (const auto& p : plan) subtask_shapes += p.shape == Shape::kSubtask;
  EXPECT_EQ(static_cast<int>(children.size()), subtask_shapes);
  for (const auto& id : children) {
    Json t = Get("/api/local/tasks/" + id);
    EXPECT_EQ(t["task"]["status"], "succeeded") << id << " " << t["latest_job"].dump();
    EXPECT_TRUE(Contains(t["latest_job"]["result"].dump(), "child-")) << t["latest_job"].dump();
    CheckNoOverlap("child " + id, EventsInOrder(id));
  }
  EXPECT_EQ(checked_, task_count + subtask_shapes);
  std::cout << "jobs recovered from killed workers: " << recovered_
            << ", reconcile parks settled: " << settled << std::endl;
  EXPECT_GT(recovered_, 0) << "no kill hit a running job";
}

}  // namespace
}  // namespace maestro::testing
