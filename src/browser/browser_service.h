// BrowserService: the browsers of the jobs that use BrowseWeb — at most one
// per job, started on its first call, kept while the job is parked (a person
// logs in through the live view; the job resumes with the session), closed
// when the job ends. The config (`browser:` in the config file) is the
// Chromium command, the sandbox around it, the host allow-lists (global and
// per space; none configured: every host is refused) and the limits.
//
// Where it sits: built by cli/engine_setup.cc when `browser:` is configured;
// the PieceExecutor registers BrowseWeb per job (browse_web_tool.h) and
// closes the job's browser when the job leaves the worker not parked; the
// API's live-view routes find the browser of a parked job here; a sweep
// every few seconds closes the browsers of jobs that ended while parked
// (cancelled) and those parked longer than park_keep_ms (the profile keeps
// the cookies: the next BrowseWeb call starts it again).
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "browser/browser_session.h"
#include "core/env.h"
#include "core/json.h"
#include "core/mutex.h"
#include "core/periodic_task.h"
#include "core/status.h"

namespace maestro::browser {

struct BrowserConfig {
  std::string chromium = "chromium";
  // "bwrap": Chromium runs in bubblewrap — the host read-only, a private
  // /tmp, writable only its profile dir, its own network namespace whose
  // only way out is the session's proxy; "none": as the server's user, on
  // the host's network (the proxy on a 127.0.0.1 port is then a setting
  // Chromium follows, not a wall).
  std::string sandbox = "bwrap";
  std::vector<std::string> allowed_hosts;                       // every space (allow_list.h)
  std::map<std::string, std::vector<std::string>> space_hosts;  // spaces.<name>: added
  int max_browsers = 4;
  std::chrono::milliseconds page_timeout{15'000};
  std::chrono::milliseconds launch_timeout{20'000};
  std::chrono::milliseconds park_keep{30 * 60'000};
  int js_heap_mb = 256;
  size_t max_text_bytes = 24 * 1024;
};

// The `browser:` section; errors name `where` (file:line:col) and the key.
Result<BrowserConfig> BrowserConfigFrom(const Json& section, const std::string& where);

// How the config starts Chromium for a profile (bubblewrap or bare).
BrowserCommand CommandFor(const BrowserConfig& config, const std::string& profile_dir);

class BrowserService {
 public:
  // `job_active(job_id)`: whether the job is still running or parked (the
  // sweep closes the others' browsers); null: no sweep.
  BrowserService(BrowserConfig config, std::string data_dir, Env* env,
                 std::function<bool(const std::string&)> job_active);
  ~BrowserService();

  // The job's browser, started on first use with the task's profile dir
  // (<data>/tasks/<task>/browser) and the space's allow-list.
  // kResourceExhausted when max_browsers are open.
  Result<std::shared_ptr<BrowserSession>> ForJob(const std::string& job_id,
                                                 const std::string& task_id,
                                                 const std::string& space);
  // The open browser of a job, or null.
  std::shared_ptr<BrowserSession> Find(const std::string& job_id);
  // The job ended (or was handed back to the queue): its browser closes.
  void CloseJob(const std::string& job_id);
  // The job parked / resumed: park_keep counts from Parked.
  void Parked(const std::string& job_id);
  // A person pressed Done in the live view: the job's next login page is
  // reported to the agent instead of parking it again (no second card).
  void MarkLoginHandedOver(const std::string& job_id);
  bool TakeLoginHandedOver(const std::string& job_id);
  // Runs before a job's Chromium is launched here (on the calling thread,
  // outside the lock): the BrowserCallServicer has a browser another process
  // still holds for the job closed first, so two Chromiums never share the
  // task's profile. Null: none. Set before jobs run.
  void SetBeforeLaunch(std::function<void(const std::string& job_id)> fn);
  int open_count() const;
  // The jobs whose browser is open here (the BrowserCallServicer serves
  // their live view to other processes).
  std::vector<std::string> OpenJobs() const;
  const BrowserConfig& config() const { return config_; }

  // One sweep (the periodic one calls this).
  void Sweep();

 private:
  struct Entry {
    std::shared_ptr<BrowserSession> session;
    int64_t parked_at_ms = 0;  // 0 = not parked
    bool handed_over = false;
  };
  std::vector<std::string> HostsFor(const std::string& space) const;

  const BrowserConfig config_;
  const std::string data_dir_;
  Env* const env_;
  std::function<bool(const std::string&)> job_active_;
  mutable Mutex mu_;
  std::map<std::string, Entry> by_job_ GUARDED_BY(mu_);
  std::function<void(const std::string&)> before_launch_ GUARDED_BY(mu_);
  PeriodicTask sweeper_;
};

}  // namespace maestro::browser
