// MultiHostCluster: maestro scaled out over "hosts" that share nothing but a
// private network and one data dir (issue 48 item 5) — PostgreSQL on host
// `db`, maestro-fakellm on `llm`, `maestro serve --workers 0` on `api` and
// two `maestro worker` on `w1` and `w2`, each its own process in its own
// network, mount and UTS namespace (NetnsLab), all on one maestro.yaml whose
// data_dir is /srv/maestro-mh-<pid>: the test's real data directory,
// bind-mounted at that path inside every maestro process's mount namespace.
// The test process is the client host: it reaches the API (and PostgreSQL,
// to read which worker holds a job's lease) over the veth network only.
//
// PostgreSQL is the Debian server run as the `postgres` user (initdb in a
// postgres-owned temp dir, pg_hba trusting the /24 only), listening on its
// veth address. BrowseWeb may reach the client host only (a test's web
// site). Start() returns "" or what failed; skippable() says whether that
// was a missing prerequisite (not root, no PostgreSQL, no ip/unshare)
// rather than a fault. The destructor stops everything: maestro processes SIGKILLed,
// PostgreSQL told to quit at once (SIGQUIT), then the lab's teardown kills
// whatever is left in the namespaces and deletes them. A crash hook SIGKILLs
// the processes when the test process dies; its namespaces (with anything
// still running in them) and its PostgreSQL dir are swept by the next run
// (NetnsLab::SweepLeftovers, SweepPgDirs).
//
// Thread safety: one owner thread; JobLease may be called from any thread.
#pragma once

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

#include <httplib.h>

#include "core/json.h"
#include "netns_lab.h"
#include "store/postgres/pg_conn.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace maestro::testing {

class MultiHostCluster {
 public:
  static constexpr int kApiPort = 8080;
  static constexpr int kLlmPort = 8000;
  static constexpr int kPgPort = 5432;

  // `script(lab)` makes the fake's script (JSON) once the hosts' addresses
  // are known. The browser may reach the client host (BrowseWeb's
  // allowed_hosts): a test's web site listens there.
  std::string Start(const std::function<Json(const NetnsLab&)>& script) {
    current_.store(this);
    InstallCrashHook();
    if (geteuid() != 0) return Skip("needs root (network namespaces, bind mounts)");
    pg_bin_ = FindPgBindir();
    if (pg_bin_.empty()) return Skip("no PostgreSQL server binaries under /usr/lib/postgresql");
    passwd* pw = getpwnam("postgres");
    if (!pw) return Skip("no `postgres` user to run PostgreSQL as");
    lab_ = std::make_unique<NetnsLab>(dir_.path(),
                                      std::vector<std::string>{"api", "w1", "w2", "db", "llm"});
    if (!lab_->ok()) {
      return lab_->unavailable() ? Skip("network lab: " + lab_->error())
                                 : "network lab: " + lab_->error();
    }
    if (std::string e = StartPostgres(pw); !e.empty()) return e;
    std::ofstream(dir_.File("script.json")) << script(*lab_).dump();
    fake_ = std::make_unique<Process>(
        lab_->Wrap("llm", {MAESTRO_FAKELLM_BIN, "--host", lab_->Addr("llm"), "--port",
                           std::to_string(kLlmPort), "--script", dir_.File("script.json")}),
        std::map<std::string, std::string>{}, dir_.File("fakellm.out"), dir_.File("fakellm.err"));
    if (!WaitHttp(lab_->Addr("llm"), kLlmPort, "/v1/_requests", *fake_)) {
      return "maestro-fakellm did not answer on the llm host:\n" + fake_->Stderr();
    }
    std::filesystem::create_directories(DataDirOnMachine());
    std::ofstream(dir_.File("maestro.yaml"))
        << "workers: 0\n"
        << "data_dir: " << data_path_ << "\n"
        << "listen: " << lab_->Addr("api") << ":" << kApiPort << "\n"
        << "database_url: " << DatabaseUrl() << "\n"
        << "log:\n  level: info\n"
        << "jobs:\n  poll_interval_ms: 50\n  heartbeat_ms: 250\n  lease_ms: 2000\n"
        << "  sweep_interval_ms: 200\n  shutdown_grace_ms: 1000\n"
        << "  retry:\n    base_delay_ms: 100\n    max_delay_ms: 200\n    max_attempts: 3\n"
        << "llm:\n  base_url: http://" << lab_->Addr("llm") << ":" << kLlmPort << "/v1\n"
        << "  model: fake\n  max_attempts: 1\n  context_length: 1000000\n"
        << "browser:\n  allowed_hosts: [\"" << lab_->ClientAddr() << "\"]\n"
        << "  page_timeout_ms: 20000\n";
    serve_ = Launch("api", "serve", {MAESTRO_BIN, "--config", dir_.File("maestro.yaml"), "serve"},
                    {{"MAESTRO_ADMIN_TOKEN", "tok"}});
    if (!WaitHttp(lab_->Addr("api"), kApiPort, "/api/health", *serve_)) {
      return "maestro serve did not come up on the api host:\n" + serve_->Stderr();
    }
    for (int i = 0; i < 2; ++i) {
      if (std::string e = StartWorker(i); !e.empty()) return e;
    }
    return "";
  }

  bool skippable() const { return skippable_; }

  ~MultiHostCluster() {
    for (auto& w : workers_) w.reset();
    serve_.reset();
    fake_.reset();
    if (pg_) {
      pg_->Signal(SIGQUIT);  // immediate shutdown: the backends go too
      if (!pg_->Wait(std::chrono::seconds(10))) pg_.reset();
    }
    pg_.reset();
    lab_.reset();
    current_.store(nullptr);
    if (!pg_dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(pg_dir_, ec);
    }
  }

  // Worker i (0 = w1, 1 = w2), started (again) and waited for.
  std::string StartWorker(int i) {
    const std::string host = i == 0 ? "w1" : "w2";
    const std::string log = "worker-" + host + "-" + std::to_string(++worker_runs_[i]);
    workers_[i] =
        Launch(host, log,
               {MAESTRO_BIN, "--config", dir_.File("maestro.yaml"), "worker", "--workers", "1"});
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < end) {
      if (workers_[i]->Stderr().find("maestro worker: data_dir=") != std::string::npos) return "";
      if (workers_[i]->Wait(std::chrono::milliseconds(1))) break;  // it exited
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return "worker " + host + " did not start:\n" + workers_[i]->Stderr();
  }
  Process& worker(int i) { return *workers_[i]; }
  Process& serve() { return *serve_; }

  // Which worker host ("w1", "w2", or "") holds job `job_id`'s lease, and its
  // fencing token, read from PostgreSQL over the wire. A worker's id is
  // "<hostname>:<pid>:w<n>"; each worker host's hostname is mh-<host>.
  struct Lease {
    std::string host;
    std::string worker_id;
    int64_t fencing_token = 0;
    std::string status;
  };
  Lease JobLease(const std::string& job_id) const {
    Lease l;
    auto conn = postgres::PgConn::Open(DatabaseUrl());
    if (!conn.ok()) return l;
    auto stmt = (*conn)->Prepare("SELECT worker_id, fencing_token, status FROM jobs WHERE id = ?1");
    if (!stmt.ok()) return l;
    stmt->Bind(1, job_id);
    auto row = stmt->Step();
    if (!row.ok() || !*row) return l;
    l.worker_id = stmt->Text(0);
    l.fencing_token = stmt->Int(1);
    l.status = stmt->Text(2);
    for (const char* h : {"w1", "w2"}) {
      if (l.worker_id.rfind(std::string("mh-") + h + ":", 0) == 0) l.host = h;
    }
    return l;
  }

  const NetnsLab& lab() const { return *lab_; }
  std::string ApiHost() const { return lab_->Addr("api"); }
  std::string ApiUrl() const { return "http://" + ApiHost() + ":" + std::to_string(kApiPort); }
  std::string LlmHost() const { return lab_->Addr("llm"); }
  std::string DataPath() const { return data_path_; }
  std::string DataDirOnMachine() const { return dir_.File("data"); }
  std::string File(const std::string& name) const { return dir_.File(name); }

  // Every maestro process's log tail, for a failed wait.
  std::string LogTail() const {
    std::string out;
    auto tail = [&](const std::string& name) {
      std::ifstream in(dir_.File(name + ".err"));
      std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (err.size() > 2500) err = err.substr(err.size() - 2500);
      out += "--- " + name + ":\n" + err;
    };
    tail("serve");
    for (int i = 0; i < 2; ++i) {
      for (int run = 1; run <= worker_runs_[i]; ++run) {
        tail("worker-" + std::string(i == 0 ? "w1" : "w2") + "-" + std::to_string(run));
      }
    }
    return out;
  }

 private:
  std::string Skip(const std::string& why) {
    skippable_ = true;
    return why;
  }

  std::string DatabaseUrl() const {
    return "postgresql://postgres@" + lab_->Addr("db") + ":" + std::to_string(kPgPort) +
           "/maestro?connect_timeout=5";
  }

  std::unique_ptr<Process> Launch(const std::string& host, const std::string& log,
                                  const std::vector<std::string>& argv,
                                  const std::map<std::string, std::string>& env = {}) {
    return std::make_unique<Process>(
        lab_->Wrap(host, argv, NetnsLab::Bind{DataDirOnMachine(), data_path_}), env,
        dir_.File(log + ".out"), dir_.File(log + ".err"));
  }

  static bool WaitHttp(const std::string& host, int port, const std::string& path, Process& p) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < end) {
      httplib::Client c(host, port);
      c.set_connection_timeout(1, 0);
      if (auto r = c.Get(path); r && r->status == 200) return true;
      if (p.Wait(std::chrono::milliseconds(1))) return false;  // it exited
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  static std::string FindPgBindir() {
    for (const char* v : {"17", "16", "15", "14", "13"}) {
      std::string d = std::string("/usr/lib/postgresql/") + v + "/bin";
      if (std::filesystem::exists(d + "/initdb") && std::filesystem::exists(d + "/postgres")) {
        return d;
      }
    }
    return "";
  }

  // Removes the PostgreSQL dirs of earlier runs that died before their
  // destructor (their server was killed by NetnsLab::SweepLeftovers).
  static void SweepPgDirs() {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/tmp", ec)) {
      const std::string name = e.path().filename().string();
      const std::string prefix = "maestro-mhpg-";
      if (name.rfind(prefix, 0) != 0) continue;
      const pid_t owner = static_cast<pid_t>(std::atol(name.c_str() + prefix.size()));
      if (owner <= 0 || owner == getpid() || kill(owner, 0) == 0 || errno != ESRCH) continue;
      std::error_code rm;
      std::filesystem::remove_all(e.path(), rm);
    }
  }

  // initdb as postgres, the /24 trusted, the server on the db host's veth.
  std::string StartPostgres(const passwd* pw) {
    SweepPgDirs();
    std::string tmpl = "/tmp/maestro-mhpg-" + std::to_string(getpid()) + "-XXXXXX";
    if (!mkdtemp(tmpl.data())) return "mkdtemp for PostgreSQL failed";
    pg_dir_ = tmpl;
    if (chown(pg_dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0) return "chown " + pg_dir_ + " failed";
    const std::vector<std::string> as_postgres = {"/usr/bin/setpriv", "--reuid=postgres",
                                                  "--regid=postgres", "--init-groups"};
    std::vector<std::string> initdb = as_postgres;
    for (const std::string& a : std::initializer_list<std::string>{
             pg_bin_ + "/initdb", "-D", pg_dir_ + "/data", "-U", "postgres", "--auth=trust", "-E",
             "UTF8", "--no-sync"}) {
      initdb.push_back(a);
    }
    auto [code, out] = RunCommand(initdb, {}, dir_.File("initdb"));
    if (code != 0) return "initdb failed (" + std::to_string(code) + "):\n" + out;
    std::ofstream(pg_dir_ + "/data/pg_hba.conf", std::ios::app)
        << "host all all " << lab_->Subnet() << " trust\n";
    std::vector<std::string> server = as_postgres;
    for (const std::string& a :
         {pg_bin_ + "/postgres", std::string("-D"), pg_dir_ + "/data", std::string("-p"),
          std::to_string(kPgPort), std::string("-k"), pg_dir_, std::string("-c"),
          "listen_addresses=" + lab_->Addr("db"), std::string("-c"), std::string("fsync=off"),
          std::string("-c"), std::string("synchronous_commit=off"), std::string("-c"),
          std::string("full_page_writes=off")}) {
      server.push_back(a);
    }
    pg_ = std::make_unique<Process>(lab_->Wrap("db", server), std::map<std::string, std::string>{},
                                    dir_.File("postgres.out"), dir_.File("postgres.err"));
    const std::string admin = "postgresql://postgres@" + lab_->Addr("db") + ":" +
                              std::to_string(kPgPort) + "/postgres?connect_timeout=2";
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < end) {
      if (auto conn = postgres::PgConn::Open(admin); conn.ok()) {
        Status st = (*conn)->ExecScript("CREATE DATABASE maestro");
        return st.ok() ? "" : "CREATE DATABASE: " + st.ToString();
      }
      if (pg_->Wait(std::chrono::milliseconds(1))) break;  // it exited
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return "PostgreSQL did not come up on the db host:\n" + pg_->Stderr();
  }

  // The crash hook: SIGKILL the cluster's processes (only kill(2): the
  // process is dying).
  static void KillAll() {
    MultiHostCluster* c = current_.load();
    if (!c) return;
    auto kill_one = [](const std::unique_ptr<Process>& p) {
      if (p && p->pid() > 0) kill(p->pid(), SIGKILL);
    };
    for (const auto& w : c->workers_) kill_one(w);
    kill_one(c->serve_);
    kill_one(c->fake_);
    if (c->pg_ && c->pg_->pid() > 0) kill(c->pg_->pid(), SIGQUIT);
  }
  static void OnFatalSignal(int sig) {
    KillAll();
    signal(sig, SIG_DFL);
    raise(sig);
  }
  static void InstallCrashHook() {
    static const bool installed = [] {
#if defined(__SANITIZE_ADDRESS__)
      __sanitizer_set_death_callback(&KillAll);
      signal(SIGABRT, &OnFatalSignal);
#else
      for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) signal(sig, &OnFatalSignal);
#endif
      return true;
    }();
    (void)installed;
  }
  static inline std::atomic<MultiHostCluster*> current_{nullptr};

  TempDir dir_;  // data/, maestro.yaml, the fake's script, every log
  const std::string data_path_ = "/srv/maestro-mh-" + std::to_string(getpid());
  std::string pg_bin_;
  std::string pg_dir_;  // postgres-owned: the cluster's files and socket
  bool skippable_ = false;
  std::unique_ptr<NetnsLab> lab_;
  std::unique_ptr<Process> pg_, fake_, serve_;
  std::unique_ptr<Process> workers_[2];
  int worker_runs_[2] = {0, 0};
};

}  // namespace maestro::testing
