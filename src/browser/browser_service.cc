#include "browser/browser_service.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <set>

namespace maestro::browser {
namespace {

using std::chrono::milliseconds;

Status BadKey(const std::string& where, const std::string& key, const std::string& what) {
  return InvalidArgument(fmt::format("{}: browser.{}: {}", where, key, what), "browser." + key);
}

Result<std::vector<std::string>> Hosts(const Json& v, const std::string& where,
                                       const std::string& key) {
  if (!v.is_array()) return BadKey(where, key, "expected a list of host names");
  std::vector<std::string> out;
  for (const auto& h : v) {
    if (!h.is_string() || !ValidAllowEntry(h.get<std::string>())) {
      return BadKey(where, key,
                    "each entry is a host such as example.com, *.example.com or 10.0.0.5, "
                    "optionally with :port");
    }
    out.push_back(h.get<std::string>());
  }
  return out;
}

Result<int64_t> Positive(const Json& v, const std::string& where, const std::string& key) {
  if (!v.is_number_integer() || v.get<int64_t>() < 1) {
    return BadKey(where, key, "expected a positive whole number");
  }
  return v.get<int64_t>();
}

}  // namespace

Result<BrowserConfig> BrowserConfigFrom(const Json& section, const std::string& where) {
  BrowserConfig c;
  if (section.is_null()) return c;
  if (!section.is_object()) {
    return InvalidArgument(fmt::format("{}: browser must be a mapping", where), "browser");
  }
  for (const auto& [key, v] : section.items()) {
    if (key == "chromium") {
      if (!v.is_string() || v.get<std::string>().empty()) {
        return BadKey(where, key, "expected the Chromium command");
      }
      c.chromium = v.get<std::string>();
    } else if (key == "sandbox") {
      if (v != Json("bwrap") && v != Json("none")) return BadKey(where, key, "bwrap or none");
      c.sandbox = v.get<std::string>();
    } else if (key == "allowed_hosts") {
      MAESTRO_ASSIGN_OR_RETURN(c.allowed_hosts, Hosts(v, where, key));
    } else if (key == "spaces") {
      if (!v.is_object()) return BadKey(where, key, "expected {space: {allowed_hosts: [...]}}");
      for (const auto& [space, sv] : v.items()) {
        const std::string k = "spaces." + space + ".allowed_hosts";
        if (!sv.is_object() || !sv.contains("allowed_hosts") || sv.size() != 1) {
          return BadKey(where, "spaces." + space, "expected {allowed_hosts: [...]}");
        }
        MAESTRO_ASSIGN_OR_RETURN(c.space_hosts[space], Hosts(sv["allowed_hosts"], where, k));
      }
    } else if (key == "max_browsers") {
      MAESTRO_ASSIGN_OR_RETURN(int64_t n, Positive(v, where, key));
      c.max_browsers = static_cast<int>(n);
    } else if (key == "page_timeout_ms") {
      MAESTRO_ASSIGN_OR_RETURN(int64_t n, Positive(v, where, key));
      c.page_timeout = milliseconds(n);
    } else if (key == "launch_timeout_ms") {
      MAESTRO_ASSIGN_OR_RETURN(int64_t n, Positive(v, where, key));
      c.launch_timeout = milliseconds(n);
    } else if (key == "park_keep_ms") {
      MAESTRO_ASSIGN_OR_RETURN(int64_t n, Positive(v, where, key));
      c.park_keep = milliseconds(n);
    } else if (key == "js_heap_mb") {
      MAESTRO_ASSIGN_OR_RETURN(int64_t n, Positive(v, where, key));
      c.js_heap_mb = static_cast<int>(n);
    } else if (key == "max_text_bytes") {
      MAESTRO_ASSIGN_OR_RETURN(int64_t n, Positive(v, where, key));
      c.max_text_bytes = static_cast<size_t>(n);
    } else {
      return BadKey(where, key,
                    "unknown key (chromium, sandbox, allowed_hosts, spaces, max_browsers, "
                    "page_timeout_ms, launch_timeout_ms, park_keep_ms, js_heap_mb, "
                    "max_text_bytes)");
    }
  }
  return c;
}

BrowserService::BrowserService(BrowserConfig config, std::string data_dir, Env* env,
                               std::function<bool(const std::string&)> job_active)
    : config_(std::move(config)),
      data_dir_(std::move(data_dir)),
      env_(env),
      job_active_(std::move(job_active)) {
  sweeper_.Start(milliseconds(5'000), PeriodicTask::FirstRun::kAfterInterval, [this] { Sweep(); });
}

BrowserService::~BrowserService() {
  sweeper_.Stop();
  std::map<std::string, Entry> all;
  {
    MutexLock lock(&mu_);
    all.swap(by_job_);
  }
  for (auto& [job, e] : all) e.session->Close();
}

std::vector<std::string> BrowserService::HostsFor(const std::string& space) const {
  std::vector<std::string> hosts = config_.allowed_hosts;
  if (auto it = config_.space_hosts.find(space); it != config_.space_hosts.end()) {
    hosts.insert(hosts.end(), it->second.begin(), it->second.end());
  }
  return hosts;
}

BrowserCommand CommandFor(const BrowserConfig& config, const std::string& profile_dir) {
  BrowserCommand c;
  c.chromium = config.chromium;
  if (config.sandbox == "bwrap") {
    // The host read-only, its own /tmp, /proc and pid namespace; writable
    // only the profile. The session adds the network namespace and the
    // bridge to its proxy.
    c.bwrap = {
        "bwrap",        "--ro-bind", "/",    "/",      "--dev",     "/dev",      "--proc",
        "/proc",        "--tmpfs",   "/tmp", "--bind", profile_dir, profile_dir, "--unshare-pid",
        "--unshare-ipc"};
  }
  return c;
}

Result<std::shared_ptr<BrowserSession>> BrowserService::ForJob(const std::string& job_id,
                                                               const std::string& task_id,
                                                               const std::string& space) {
  {
    MutexLock lock(&mu_);
    auto it = by_job_.find(job_id);
    if (it != by_job_.end() && it->second.session->alive()) {
      it->second.parked_at_ms = 0;
      return it->second.session;
    }
    if (it != by_job_.end()) by_job_.erase(it);  // crashed: start it again
    if (static_cast<int>(by_job_.size()) >= config_.max_browsers) {
      return Status(StatusCode::kResourceExhausted,
                    fmt::format("all {} browsers are in use (browser.max_browsers); try again "
                                "later",
                                config_.max_browsers));
    }
  }
  std::function<void(const std::string&)> before_launch;
  {
    MutexLock lock(&mu_);
    before_launch = before_launch_;
  }
  if (before_launch) before_launch(job_id);
  SessionSpec spec;
  spec.profile_dir = data_dir_ + "/tasks/" + task_id + "/browser";
  spec.command = CommandFor(config_, spec.profile_dir);
  spec.allowed_hosts = HostsFor(space);
  spec.page_timeout = config_.page_timeout;
  spec.max_text_bytes = config_.max_text_bytes;
  spec.js_heap_mb = config_.js_heap_mb;
  // Started outside the lock: a launch takes a second or more.
  MAESTRO_ASSIGN_OR_RETURN(std::unique_ptr<BrowserSession> started,
                           BrowserSession::Start(*env_, std::move(spec)));
  std::shared_ptr<BrowserSession> session(std::move(started));
  spdlog::info("job {}: browser started (pid {})", job_id, session->pid());
  MutexLock lock(&mu_);
  auto& e = by_job_[job_id];
  if (e.session && e.session->alive()) {  // a parallel call won the race
    session->Close();
    return e.session;
  }
  e.session = session;
  e.parked_at_ms = 0;
  return session;
}

std::shared_ptr<BrowserSession> BrowserService::Find(const std::string& job_id) {
  MutexLock lock(&mu_);
  auto it = by_job_.find(job_id);
  return it == by_job_.end() ? nullptr : it->second.session;
}

void BrowserService::CloseJob(const std::string& job_id) {
  std::shared_ptr<BrowserSession> s;
  {
    MutexLock lock(&mu_);
    auto it = by_job_.find(job_id);
    if (it == by_job_.end()) return;
    s = std::move(it->second.session);
    by_job_.erase(it);
  }
  s->Close();
  spdlog::info("job {}: browser closed", job_id);
}

void BrowserService::Parked(const std::string& job_id) {
  MutexLock lock(&mu_);
  if (auto it = by_job_.find(job_id); it != by_job_.end()) {
    it->second.parked_at_ms = env_->MonotonicMs();
  }
}

void BrowserService::MarkLoginHandedOver(const std::string& job_id) {
  MutexLock lock(&mu_);
  if (auto it = by_job_.find(job_id); it != by_job_.end()) it->second.handed_over = true;
}

bool BrowserService::TakeLoginHandedOver(const std::string& job_id) {
  MutexLock lock(&mu_);
  auto it = by_job_.find(job_id);
  if (it == by_job_.end() || !it->second.handed_over) return false;
  it->second.handed_over = false;
  return true;
}

int BrowserService::open_count() const {
  MutexLock lock(&mu_);
  return static_cast<int>(by_job_.size());
}

void BrowserService::SetBeforeLaunch(std::function<void(const std::string&)> fn) {
  MutexLock lock(&mu_);
  before_launch_ = std::move(fn);
}

std::vector<std::string> BrowserService::OpenJobs() const {
  MutexLock lock(&mu_);
  std::vector<std::string> out;
  for (const auto& [job, e] : by_job_) out.push_back(job);
  return out;
}

void BrowserService::Sweep() {
  std::vector<std::pair<std::string, int64_t>> jobs;
  {
    MutexLock lock(&mu_);
    for (const auto& [job, e] : by_job_) jobs.emplace_back(job, e.parked_at_ms);
  }
  const int64_t now = env_->MonotonicMs();
  for (const auto& [job, parked_at] : jobs) {
    bool stale = parked_at > 0 && now - parked_at > config_.park_keep.count();
    if (stale || (job_active_ && !job_active_(job))) CloseJob(job);
  }
}

}  // namespace maestro::browser
