#include "cli/task_watch.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <deque>
#include <map>
#include <ostream>
#include <set>
#include <thread>
#include <vector>

#include "cli/format.h"
#include "core/mutex.h"
#include "core/utf8.h"

namespace maestro::cli {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Set by SIGINT: the only process-wide state, as a signal handler needs it.
volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void OnInterrupt(int) { g_interrupted = 1; }

bool Interrupted() { return g_interrupted != 0; }

bool IsTerminal(const std::string& s) {
  return s == "succeeded" || s == "failed" || s == "cancelled";
}

// Serialises the two threads' output. Text deltas are written as they come;
// a whole line starts on a fresh line.
class Printer {
 public:
  // `muted`: --json, where only Raw() lines (the server's events) print.
  Printer(std::ostream& out, bool muted) : out_(out), muted_(muted) {}
  void Raw(const std::string& line) {
    MutexLock lock(&mu_);
    out_ << line << "\n" << std::flush;
  }
  void Text(const std::string& s) {
    MutexLock lock(&mu_);
    if (s.empty() || muted_) return;
    out_ << s << std::flush;
    at_line_start_ = s.back() == '\n';
    last_text_ = Clock::now();
  }
  void Line(const std::string& s) {
    MutexLock lock(&mu_);
    if (muted_) return;
    if (!at_line_start_) out_ << "\n";
    out_ << s << "\n" << std::flush;
    at_line_start_ = true;
  }
  // Lets streamed text that is still arriving come out before a hint: waits
  // until no text was printed for `quiet` (at most `limit`).
  void WaitQuiet(std::chrono::milliseconds quiet, std::chrono::milliseconds limit) {
    const auto end = Clock::now() + limit;
    while (Clock::now() < end) {
      {
        MutexLock lock(&mu_);
        if (Clock::now() - last_text_ >= quiet) return;
      }
      std::this_thread::sleep_for(20ms);
    }
  }

 private:
  Mutex mu_;
  std::ostream& out_;  // written with mu_ held
  const bool muted_;
  bool at_line_start_ GUARDED_BY(mu_) = true;
  Clock::time_point last_text_ GUARDED_BY(mu_){};
};

// Reads one job's delta stream to its `end` and prints it. `idle_ms` is the
// longest silence before the transfer counts as dropped; with `once` a drop
// ends the job's stream instead of reconnecting (no-follow).
class DeltaPrinter {
 public:
  DeltaPrinter(const ApiClient& c, Printer& p) : c_(c), p_(p) {}

  // `caught_up` runs once the deltas buffered at connect time are printed
  // (the first body chunk) or the stream is over, whichever comes first.
  void Follow(
      const std::string& job_id, bool once, const std::function<bool()>& stop,
      const std::function<void()>& caught_up = [] {}) {
    bool told = false;
    auto tell = [&] {
      if (!told) caught_up();
      told = true;
    };
    std::string last;
    std::map<int, std::pair<std::string, std::string>> calls;  // index -> id, arguments
    std::map<std::string, std::string> args_by_id;
    bool ended = false;
    for (int drops = 0; !ended && !stop() && drops < 600; ++drops) {
      std::vector<SseEvent> frames;  // what the chunk at hand completed
      SseParser parser([&](const SseEvent& f) { frames.push_back(f); });
      int status = 0;
      auto r = c_.Stream(
          "/api/local/jobs/" + UrlEncode(job_id) + "/stream", last, once ? 1'500 : 30'000,
          [&](const HttpReply& h) {
            status = h.status;
            return h.status == 200;
          },
          [&](std::string_view chunk) {
            frames.clear();
            parser.Feed(chunk);
            for (const SseEvent& f : frames) {
              if (!f.id.empty()) last = f.id;
              // The deltas live in the stopping server's memory: the next
              // one numbers them afresh.
              if (f.event == "shutdown") last.clear();
              if (f.event == "end") ended = true;
              if (f.event == "delta") Print(f.data, &calls, &args_by_id);
            }
            tell();
            return !ended;
          },
          stop);
      if (status >= 400 || once) break;  // a job the server no longer knows
      if (!ended && !r.ok()) std::this_thread::sleep_for(500ms);
    }
    tell();
  }

 private:
  void Print(const std::string& data, std::map<int, std::pair<std::string, std::string>>* calls,
             std::map<std::string, std::string>* args_by_id) {
    auto d = ParseJson(data);
    if (!d.ok() || !d->is_object()) return;
    const std::string type = d->value("type", "");
    if (type == "text") {
      p_.Text(d->value("text", ""));
    } else if (type == "tool_call") {
      // Fragments: the id comes first, the arguments in pieces.
      auto& [id, args] = (*calls)[d->value("index", 0)];
      std::string new_id = d->value("id", "");
      if (!new_id.empty() && new_id != id) {
        id = new_id;
        args.clear();
      }
      args += d->value("arguments", "");
      if (!id.empty()) (*args_by_id)[id] = args;
    } else if (type == "tool_result") {
      std::string id = d->value("id", "");
      p_.Line(ToolCallLine(d->value("name", ""), (*args_by_id)[id], d->value("is_error", false)));
    } else if (type == "movement") {
      p_.Line("[movement " + d->value("movement", "") + "]");
    }
  }

  const ApiClient& c_;
  Printer& p_;
};

// Follows the jobs handed to it, one after another, on its own thread.
class JobFollower {
 public:
  JobFollower(const ApiClient& c, Printer& p) : printer_(c, p) {
    thread_ = std::thread([this] { Run(); });
  }
  ~JobFollower() {
    {
      MutexLock lock(&mu_);
      stop_ = true;
    }
    cv_.SignalAll();
    thread_.join();
  }
  void Add(const std::string& job_id) {
    {
      MutexLock lock(&mu_);
      queue_.push_back(job_id);
    }
    cv_.SignalAll();
  }
  // Waits (at most `limit`) until the job's text buffered so far is printed,
  // so a hint or the result comes after the text that led to it.
  void WaitCaughtUp(const std::string& job_id, std::chrono::milliseconds limit) {
    MutexLock lock(&mu_);
    cv_.WaitFor(&mu_, limit, [&]() REQUIRES(mu_) { return stop_ || caught_up_.count(job_id) > 0; });
  }

 private:
  void Run() {
    for (;;) {
      std::string job;
      {
        MutexLock lock(&mu_);
        cv_.Wait(&mu_, [&]() REQUIRES(mu_) { return stop_ || !queue_.empty(); });
        if (stop_) return;
        job = queue_.front();
        queue_.pop_front();
      }
      printer_.Follow(
          job, false,
          [this] {
            MutexLock lock(&mu_);
            return stop_ || Interrupted();
          },
          [this, job] {
            {
              MutexLock lock(&mu_);
              caught_up_.insert(job);
            }
            cv_.SignalAll();
          });
    }
  }

  DeltaPrinter printer_;
  Mutex mu_;
  CondVar cv_;
  std::deque<std::string> queue_ GUARDED_BY(mu_);
  std::set<std::string> caught_up_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

// The task-level view: reacts to the task's events, decides when it ended.
class TaskWatcher {
 public:
  TaskWatcher(const ClientOptions& o, std::string task_id, WatchOptions w, std::ostream& out)
      : c_(o), task_id_(std::move(task_id)), w_(w), p_(out, o.json) {}

  int Run() {
    // The task must exist (and be visible) before anything is streamed.
    auto first = c_.Get(TaskPath());
    if (!first.ok()) return ReportTransportError(c_.options(), first.status());
    if (first->status >= 400) return ReportHttpError(c_.options(), *first);
    p_.Line(fmt::format("task {} — {} ({})", task_id_, TaskTitle(first->body["task"]),
                        first->body["task"].value("status", "")));
    return w_.follow ? Follow() : Backlog();
  }

 private:
  std::string TaskPath() const { return "/api/local/tasks/" + UrlEncode(task_id_); }

  // --no-follow: the events so far (JSON pages), each new job's buffered text.
  int Backlog() {
    DeltaPrinter deltas(c_, p_);
    std::string after;
    for (;;) {
      auto page = c_.Get(TaskPath() + "/events" + (after.empty() ? "" : "?after=" + after));
      if (!page.ok()) return ReportTransportError(c_.options(), page.status());
      if (page->status >= 400) return ReportHttpError(c_.options(), *page);
      const Json events = page->body.value("events", Json::array());
      if (events.empty()) break;
      for (const Json& e : events) {
        std::string job = e.value("job_id", "");
        if (e.value("type", "") == "job.status" && !job.empty() && jobs_.insert(job).second) {
          if (!c_.options().json) deltas.Follow(job, true, Interrupted);
        }
        if (int code = 0; Handle(e, &code)) return code;
        after = e.value("id", "");
      }
    }
    return 0;
  }

  int Follow() {
    JobFollower follower(c_, p_);
    if (!c_.options().json) follower_ = &follower;  // --json: the task's events only
    std::signal(SIGINT, OnInterrupt);
    std::string last;
    int code = -1;
    for (int failures = 0; code < 0 && failures < 120;) {
      if (Interrupted()) return 130;
      std::vector<SseEvent> frames;  // what the chunk at hand completed
      SseParser parser([&](const SseEvent& f) { frames.push_back(f); });
      int status = 0;
      bool got_frame = false;
      auto r = c_.Stream(
          TaskPath() + "/events", last, 30'000,
          [&](const HttpReply& h) {
            status = h.status;
            return h.status == 200;
          },
          [&](std::string_view chunk) {
            frames.clear();
            parser.Feed(chunk);
            for (const SseEvent& f : frames) {
              got_frame = true;
              if (f.event == "shutdown") return false;  // reconnect once it is back
              if (!f.id.empty()) last = f.id;
              auto e = ParseJson(f.data);
              if (e.ok() && e->is_object() && Handle(*e, &code)) return false;
            }
            return true;
          },
          Interrupted);
      if (code >= 0) break;
      if (Interrupted()) return 130;
      if (status >= 400) {
        p_.Line(fmt::format("maestro: the server answered {} to the event stream", status));
        return 2;
      }
      if (!r.ok() && status == 0 && last.empty() && failures == 0 &&
          r.status().code() == StatusCode::kUnavailable) {
        return ReportTransportError(c_.options(), r.status());
      }
      failures = got_frame ? 0 : failures + 1;
      std::this_thread::sleep_for(500ms);
    }
    return code < 0 ? 1 : code;
  }

  // One task event. Returns true (with *code) when the watch is over.
  bool Handle(const Json& e, int* code) {
    if (c_.options().json) p_.Raw(e.dump());
    const std::string type = e.value("type", "");
    const Json p = e.value("payload", Json::object());
    std::string job = e.value("job_id", "");
    if (job.empty()) job = p.value("job_id", "");
    if (type == "job.status") return OnJobStatus(job, p, code);
    if (type == "request.created") {
      CatchUp(job);
      Json req = {{"id", p.value("request_id", "")}, {"kind", p.value("kind", "tool")}};
      std::string reason = PendingReason(req["id"]);
      p_.Line(fmt::format("needs approval: {} request {}: {}{}", req["kind"].get<std::string>(),
                          req["id"].get<std::string>(), p.value("name", ""),
                          reason.empty() ? "" : " — " + reason));
      std::string cmds = DecideCommands(task_id_, req, "  ");
      cmds.pop_back();
      p_.Line(cmds);
    } else if (type == "request.decided") {
      p_.Line(
          fmt::format("request {} {}{}", p.value("request_id", ""), p.value("status", ""),
                      p.value("scope", "").empty() ? "" : " (scope " + p.value("scope", "") + ")"));
    } else if (type == "comment.created" && p.value("kind", "") == "result") {
      // Printed at the task's end from the final job; a handoff's note is not the answer.
    }
    return false;
  }

  bool OnJobStatus(const std::string& job, const Json& p, int* code) {
    const std::string to = p.value("to", "");
    if (!job.empty() && jobs_.insert(job).second && follower_) {
      if (jobs_.size() > 1) p_.Line(fmt::format("[job {}]", job.substr(0, 8)));
      follower_->Add(job);
    }
    if (to == "retry") {
      p_.Line(fmt::format("[job {} will retry: {}]", job.substr(0, 8), p.value("error", "")));
    }
    if (to != "waiting_human" && !IsTerminal(to)) return false;
    auto detail = c_.Get(TaskPath());
    if (!detail.ok() || detail->status != 200) return false;  // the stream goes on
    const Json& d = detail->body;
    const Json latest = d.value("latest_job", Json());
    const bool is_latest = latest.is_object() && latest.value("id", "") == job;
    if (to == "waiting_human") {
      if (p.value("wait_reason", "") == "ask" || p.value("wait_reason", "") == "reconcile") {
        PrintQuestion(job);
      }
      if (w_.until_wait && is_latest && latest.value("status", "") == "waiting_human") {
        *code = 0;
        return true;
      }
      return false;
    }
    if (!is_latest || !TaskEnded(d)) {
      if (to != "succeeded") {
        p_.Line(fmt::format("[job {} {}{}]", job.substr(0, 8), to,
                            p.value("error", "").empty() ? "" : ": " + p.value("error", "")));
      }
      return false;
    }
    CatchUp(job);
    const std::string status = latest.value("status", "");
    const std::string result = latest.value("result", "");
    p_.Line(fmt::format("task {}{}", status,
                        latest.value("error_message", "").empty() || status == "succeeded"
                            ? ""
                            : ": " + latest.value("error_message", "")));
    if (!result.empty()) p_.Line("result:\n" + result);
    *code = status == "succeeded" ? 0 : 1;
    return true;
  }

  // Lets the job's streamed text come out before what follows from it.
  void CatchUp(const std::string& job) {
    if (follower_ && !job.empty()) follower_->WaitCaughtUp(job, 3s);
    p_.WaitQuiet(300ms, 2s);
  }

  static bool TaskEnded(const Json& detail) {
    for (const Json& j : detail.value("jobs", Json::array())) {
      if (!IsTerminal(j.value("status", ""))) return false;
    }
    return true;
  }

  void PrintQuestion(const std::string& job) {
    CatchUp(job);
    auto r = c_.Get(TaskPath() + "/comments");
    std::string q;
    if (r.ok() && r->status == 200) {
      for (const Json& c : r->body.value("comments", Json::array())) {
        if (c.value("kind", "") == "question" && c.value("job_id", "") == job) {
          q = c.value("body", "");
        }
      }
    }
    p_.Line("question: " + (q.empty() ? "(see the task's comments)" : q));
    p_.Line("  answer: " + AnswerCommand(task_id_));
  }

  std::string PendingReason(const std::string& request_id) {
    auto d = c_.Get(TaskPath());
    if (!d.ok() || d->status != 200) return "";
    for (const Json& r : d->body.value("pending_requests", Json::array())) {
      if (r.value("id", "") == request_id) return r.value("reason", "");
    }
    return "";
  }

  ApiClient c_;
  const std::string task_id_;
  const WatchOptions w_;
  Printer p_;
  JobFollower* follower_ = nullptr;
  std::set<std::string> jobs_;  // jobs seen, in the order the events named them
};

}  // namespace

int TaskWatch(const ClientOptions& o, const std::string& task_id, const WatchOptions& w,
              std::ostream& out) {
  return TaskWatcher(o, task_id, w, out).Run();
}

}  // namespace maestro::cli
