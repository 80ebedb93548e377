#include "support/pg_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include "store/postgres/pg_conn.h"

namespace maestro::testing {
namespace {

namespace fs = std::filesystem;

struct RunAs {
  bool as_postgres = false;  // we are root: drop to the postgres user
  uid_t uid = 0;
  gid_t gid = 0;
};

// Runs argv (as the postgres user when `as.as_postgres`), output appended to
// `log`. Returns the exit status, or -1 when it could not run.
int Run(const std::vector<std::string>& argv, const RunAs& as, const std::string& log) {
  // Everything the child needs is built before fork (no allocation after it).
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    if (as.as_postgres) {
      if (setgroups(0, nullptr) != 0 || setgid(as.gid) != 0 || setuid(as.uid) != 0) _exit(126);
    }
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (s.size() > 2000) s = "…" + s.substr(s.size() - 2000);
  return s;
}

std::string FindBindir() {
  for (const char* v : {"17", "16", "15", "14", "13"}) {
    std::string d = std::string("/usr/lib/postgresql/") + v + "/bin";
    if (fs::exists(d + "/initdb") && fs::exists(d + "/pg_ctl")) return d;
  }
  FILE* p = popen("pg_config --bindir 2>/dev/null", "r");
  if (!p) return {};
  char buf[512] = {0};
  std::string out = fgets(buf, sizeof buf, p) ? buf : "";
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  if (!out.empty() && fs::exists(out + "/initdb")) return out;
  return {};
}

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

RunAs CurrentRunAs() {
  RunAs as;
  if (geteuid() != 0) return as;
  if (passwd* pw = getpwnam("postgres")) {
    as.as_postgres = true;
    as.uid = pw->pw_uid;
    as.gid = pw->pw_gid;
  }
  return as;
}

std::mutex g_shared_mu;
std::unique_ptr<PgServer> g_shared;
std::string g_skip_reason;
bool g_shared_tried = false;

}  // namespace

Result<std::unique_ptr<PgServer>> PgServer::Start(const std::string& extra_options) {
  std::unique_ptr<PgServer> s(new PgServer());
  s->bindir_ = FindBindir();
  if (s->bindir_.empty()) {
    return Unavailable(
        "no PostgreSQL server binaries (initdb, pg_ctl) found under "
        "/usr/lib/postgresql/*/bin or pg_config --bindir");
  }
  RunAs as = CurrentRunAs();
  if (geteuid() == 0 && !as.as_postgres) {
    return Unavailable("running as root and there is no `postgres` user to run initdb as");
  }
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  if (ec) return Unavailable("no temp directory: " + ec.message());
  std::string tmpl = (tmp / "maestro-pg-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) return Unavailable("mkdtemp " + tmpl + " failed");
  s->dir_ = tmpl;
  if (as.as_postgres && chown(s->dir_.c_str(), as.uid, as.gid) != 0) {
    return Unavailable("chown " + s->dir_ + " to postgres failed");
  }
  chmod(s->dir_.c_str(), 0700);
  std::string data = s->dir_ + "/data";
  std::string log = s->dir_ + "/setup.log";
  int rc = Run({s->bindir_ + "/initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
                "--no-sync", "--no-instructions"},
               as, log);
  if (rc != 0) {
    return Unavailable("initdb failed (exit " + std::to_string(rc) + "): " + ReadFile(log));
  }
  // A free port can be taken between the probe and the start: try a few.
  for (int attempt = 0; attempt < 5 && !s->started_; ++attempt) {
    int port = FreePort();
    if (port == 0) continue;
    std::string opts = "-c listen_addresses=127.0.0.1 -p " + std::to_string(port) + " -k " +
                       s->dir_ +
                       " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
                       " -c max_connections=200";
    if (!extra_options.empty()) opts += " " + extra_options;
    rc = Run({s->bindir_ + "/pg_ctl", "-D", data, "-o", opts, "-l", s->dir_ + "/server.log", "-t",
              "60", "-w", "start"},
             as, log);
    if (rc == 0) {
      s->port_ = port;
      s->started_ = true;
    }
  }
  if (!s->started_) {
    return Unavailable("pg_ctl start failed: " + ReadFile(log) + "\nserver.log:\n" +
                       ReadFile(s->dir_ + "/server.log"));
  }
  return s;
}

PgServer::~PgServer() {
  if (started_) {
    Run({bindir_ + "/pg_ctl", "-D", dir_ + "/data", "-m", "immediate", "-w", "stop"},
        CurrentRunAs(), dir_ + "/setup.log");
  }
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

std::string PgServer::AdminUrl() const {
  return "postgresql://postgres@127.0.0.1:" + std::to_string(port_) + "/postgres";
}

Result<std::string> PgServer::CreateDatabase() {
  std::string name = "t" + std::to_string(getpid()) + "_" + std::to_string(next_db_.fetch_add(1));
  auto admin = postgres::PgConn::Open(AdminUrl());
  if (!admin.ok()) return admin.status();
  MAESTRO_RETURN_IF_ERROR((*admin)->ExecScript("CREATE DATABASE " + name));
  return "postgresql://postgres@127.0.0.1:" + std::to_string(port_) + "/" + name;
}

PgServer* PgServer::Shared() {
  std::lock_guard<std::mutex> lock(g_shared_mu);
  if (!g_shared_tried) {
    g_shared_tried = true;
    auto s = Start();
    if (s.ok()) {
      g_shared = std::move(s).value();
    } else {
      g_skip_reason = s.status().message();
    }
  }
  return g_shared.get();
}

const std::string& PgServer::SkipReason() { return g_skip_reason; }

bool PgServer::Required() {
  const char* v = std::getenv("TEST_REQUIRE_POSTGRES");
  return v && std::string(v) == "1";
}

}  // namespace maestro::testing
