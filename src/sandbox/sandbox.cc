#include "sandbox/sandbox.h"

#include <fmt/format.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/env.h"
#include "core/process.h"

namespace maestro::tools {

namespace fs = std::filesystem;

// The synthesized /etc files: written once at Probe into a private temp dir,
// bound read-only file by file, removed when the last Sandbox copy goes.
struct Sandbox::EtcDir {
  Env* env = nullptr;
  std::string dir;
  ~EtcDir() {
    if (env && !dir.empty()) env->RemoveAll(dir).IgnoreError();
  }
};

namespace {

// The command runs as nobody inside its own user namespace. Host files owned
// by maestro's uid appear owned by 65534 there and stay writable (the mapping
// is 65534 -> maestro's uid); files it creates are maestro's on the host.
constexpr const char* kSandboxUid = "65534";

// Host files of /etc a command may need and that hold no secret, bound one
// by one when present. resolv.conf is added only with the network.
constexpr const char* kHostEtc[] = {"/etc/ld.so.cache",
                                    "/etc/ld.so.conf",
                                    "/etc/ld.so.conf.d",
                                    "/etc/ssl/certs",
                                    "/etc/ssl/openssl.cnf",
                                    "/etc/ca-certificates",
                                    "/etc/ca-certificates.conf",
                                    "/etc/alternatives",
                                    "/etc/localtime",
                                    "/etc/timezone",
                                    "/etc/protocols",
                                    "/etc/services",
                                    "/etc/os-release",
                                    "/etc/debian_version"};

constexpr const char* kEtcFiles[][2] = {
    {"passwd",
     "root:x:0:0:root:/root:/bin/sh\n"
     "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"},
    {"group", "root:x:0:\nnogroup:x:65534:\n"},
    {"hosts", "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"},
    {"nsswitch.conf",
     "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\nnetworks: files\n"
     "protocols: files\nservices: files\n"},
};

void AddSystemBinds(std::vector<std::string>& a) {
  std::error_code ec;
  if (fs::exists("/usr", ec)) a.insert(a.end(), {"--ro-bind", "/usr", "/usr"});
  // Merged-/usr systems have /bin etc. as symlinks; --ro-bind of a symlink
  // would fail, so those are recreated as symlinks instead.
  for (const char* dir : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
    if (fs::is_symlink(fs::symlink_status(dir, ec))) {
      a.insert(a.end(), {"--symlink", fs::read_symlink(dir, ec).string(), dir});
    } else if (fs::exists(dir, ec)) {
      a.insert(a.end(), {"--ro-bind", dir, dir});
    }
  }
}

void AddEtc(std::vector<std::string>& a, const std::string& synthesized, bool network) {
  std::error_code ec;
  a.insert(a.end(), {"--dir", "/etc"});
  for (const auto& f : kEtcFiles) {
    a.insert(a.end(), {"--ro-bind", synthesized + "/" + f[0], std::string("/etc/") + f[0]});
  }
  for (const char* p : kHostEtc) {
    if (fs::exists(p, ec)) a.insert(a.end(), {"--ro-bind", p, p});
  }
  if (network && fs::exists("/etc/resolv.conf", ec)) {
    a.insert(a.end(), {"--ro-bind", "/etc/resolv.conf", "/etc/resolv.conf"});
  }
  a.insert(a.end(), {"--symlink", "../proc/self/mounts", "/etc/mtab"});
}

// prlimit(1) runs INSIDE the new user namespace, just before the shell.
// Why there: RLIMIT_NPROC counts processes per (user namespace, uid) — since
// Linux 5.14 a fresh user namespace starts its own count, so 512 means 512
// processes of THIS sandbox, not of every process of maestro's host uid
// (setting it on bwrap on the host would count the server's own threads and
// every other task's commands). The kernel exempts host root (kuid 0) from
// RLIMIT_NPROC even there, hence the pids cgroup as well when maestro runs
// as root. Hard limits cannot be raised again: no capability survives.
void AddLimits(std::vector<std::string>& a, const SandboxLimits& l,
               std::chrono::milliseconds timeout) {
  int64_t cpu = l.cpu_seconds;
  if (cpu == 0) cpu = std::max<int64_t>(1, (timeout.count() + 999) / 1000);
  // soft:hard one second apart: the soft limit sends SIGXCPU (which names
  // the cause), the hard one SIGKILL for a command that ignores it.
  a.insert(a.end(), {"/usr/bin/prlimit", fmt::format("--cpu={}:{}", cpu, cpu + 1)});
  auto add = [&a](const char* opt, int64_t v) {
    a.push_back(v > 0 ? fmt::format("--{}={}", opt, v) : fmt::format("--{}=unlimited", opt));
  };
  add("as", l.address_space_bytes);
  add("fsize", l.file_size_bytes);
  add("nofile", l.open_files);
  add("nproc", l.processes);
  a.push_back("--");
}

std::shared_ptr<const Sandbox::EtcDir> WriteEtc(Env& env, std::string* error) {
  auto tmp = env.CreateTempDir(fs::temp_directory_path().string(), "maestro-etc-");
  if (!tmp.ok()) {
    *error = "cannot create the sandbox /etc dir: " + tmp.status().message();
    return nullptr;
  }
  auto etc = std::make_shared<Sandbox::EtcDir>();
  etc->env = &env;
  etc->dir = *tmp;
  if (Status st = env.SetPermissions(*tmp, 0755); !st.ok()) {
    *error = "cannot open the sandbox /etc dir: " + st.message();
    return nullptr;
  }
  for (const auto& f : kEtcFiles) {
    if (Status st = WriteStringToFile(env, *tmp + "/" + f[0], f[1]); !st.ok()) {
      *error = "cannot write the sandbox /etc/" + std::string(f[0]) + ": " + st.message();
      return nullptr;
    }
  }
  return etc;
}

// Where per-command pids cgroups can be made: a dir under the pids
// controller (cgroup v2 unified or the v1 pids hierarchy) in which a child
// gets a pids.max. "" with the reason in *why otherwise.
std::string FindCgroupBase(Env& env, std::string* why) {
  std::ifstream in("/proc/self/cgroup");
  std::string line, v2, v1;
  while (std::getline(in, line)) {
    auto c1 = line.find(':');
    auto c2 = line.find(':', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    const std::string ctrls = line.substr(c1 + 1, c2 - c1 - 1);
    const std::string path = line.substr(c2 + 1);
    if (ctrls.empty()) v2 = "/sys/fs/cgroup" + path;
    if (ctrls == "pids") v1 = "/sys/fs/cgroup/pids" + path;
  }
  struct statfs sf {};
  const bool unified = statfs("/sys/fs/cgroup", &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
  std::string base = unified ? v2 : v1;
  if (base.empty()) {
    *why = "no pids cgroup controller is mounted";
    return "";
  }
  const std::string probe = fmt::format("{}/maestro-probe-{}", base, getpid());
  if (Status st = env.CreateDirs(probe); !st.ok()) {
    *why = fmt::format("cannot create a cgroup under {} ({})", base, st.message());
    return "";
  }
  const bool pids = env.FileExists(probe + "/pids.max");
  env.RemoveFile(probe).IgnoreError();
  if (!pids) {
    *why = fmt::format("the pids controller is not enabled for children of {}", base);
    return "";
  }
  return base;
}

bool AtOrUnder(const std::string& path, const std::string& root) {
  if (path.compare(0, root.size(), root) != 0) return false;
  return path.size() == root.size() || path[root.size()] == '/' || root == "/";
}

}  // namespace

Result<SandboxLimits> SandboxLimits::FromJson(const Json& j, const SandboxLimits& base,
                                              const std::string& where) {
  SandboxLimits l = base;
  if (j.is_null()) return l;
  if (!j.is_object()) return InvalidArgument(where + ": limits must be a mapping", where);
  const std::map<std::string, int64_t*> fields = {{"cpu_seconds", &l.cpu_seconds},
                                                  {"address_space_bytes", &l.address_space_bytes},
                                                  {"file_size_bytes", &l.file_size_bytes},
                                                  {"open_files", &l.open_files},
                                                  {"processes", &l.processes}};
  for (const auto& [k, v] : j.items()) {
    auto it = fields.find(k);
    if (it == fields.end()) {
      return InvalidArgument(fmt::format("{}: unknown limit '{}' (known: cpu_seconds, "
                                         "address_space_bytes, file_size_bytes, open_files, "
                                         "processes)",
                                         where, k),
                             where + "." + k);
    }
    int64_t n = -1;
    if (v.is_number_integer()) {
      n = v.get<int64_t>();
    } else if (v.is_string()) {
      try {
        size_t used = 0;
        n = std::stoll(v.get<std::string>(), &used);
        if (used != v.get<std::string>().size()) n = -1;
      } catch (const std::exception&) {
        n = -1;
      }
    }
    if (n < 0) {
      return InvalidArgument(
          fmt::format("{}: '{}' must be a non-negative integer (0 = unlimited)", where, k),
          where + "." + k);
    }
    *it->second = n;
  }
  return l;
}

Json SandboxLimits::ToJson() const {
  return {{"cpu_seconds", cpu_seconds},
          {"address_space_bytes", address_space_bytes},
          {"file_size_bytes", file_size_bytes},
          {"open_files", open_files},
          {"processes", processes}};
}

void Sandbox::SetLimits(SandboxLimits defaults, std::map<std::string, SandboxLimits> by_root) {
  defaults_ = defaults;
  by_root_ = std::move(by_root);
}

SandboxLimits Sandbox::LimitsFor(const std::string& workspace) const {
  const SandboxLimits* best = &defaults_;
  size_t best_len = 0;
  for (const auto& [root, l] : by_root_) {
    if (AtOrUnder(workspace, root) && root.size() >= best_len) {
      best = &l;
      best_len = root.size();
    }
  }
  return *best;
}

std::vector<std::string> Sandbox::Wrap(const SandboxCommand& c) const {
  std::vector<std::string> a;
  if (!c.cgroup_dir.empty()) {
    // On the host, before bwrap: join the command's pids cgroup (a fixed
    // script; the command itself is only an argument of bwrap below).
    a = {"/bin/sh", "-c", "echo $$ > \"$0/cgroup.procs\" && exec \"$@\"", c.cgroup_dir};
  }
  a.insert(a.end(),
           {bwrap_, "--die-with-parent", "--new-session", "--unshare-all", "--unshare-user",
            "--uid", kSandboxUid, "--gid", kSandboxUid, "--cap-drop", "ALL"});
  if (c.network) a.push_back("--share-net");
  AddSystemBinds(a);
  AddEtc(a, etc_ ? etc_->dir : std::string("/nonexistent"), c.network);
  a.insert(a.end(), {"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"});
  const std::string& inside = c.mount_at.empty() ? c.workspace : c.mount_at;
  a.insert(a.end(), {"--bind", c.workspace, inside});
  std::error_code ec;
  for (const auto& p : c.readonly_paths) {
    if (!p.empty() && fs::exists(p, ec)) a.insert(a.end(), {"--ro-bind", p, p});
  }
  a.insert(a.end(), {"--chdir", inside, "--"});
  AddLimits(a, c.limits, c.timeout);
  a.insert(a.end(), {"/bin/sh", "-c", c.command});
  return a;
}

std::vector<std::string> Sandbox::Wrap(const std::string& workspace, bool network,
                                       const std::string& command) const {
  SandboxCommand c;
  c.workspace = workspace;
  c.network = network;
  c.command = command;
  c.limits = LimitsFor(workspace);
  return Wrap(c);
}

Sandbox Sandbox::Probe(const std::string& bwrap_path, Env* env) {
  Sandbox s;
  s.env_ = env;
  s.bwrap_ = bwrap_path;
  s.etc_ = WriteEtc(*env, &s.reason_);
  if (!s.etc_) return s;
  ProcessSpec spec;
  spec.argv = s.Wrap("/tmp", false, "true");
  spec.timeout = std::chrono::seconds(10);
  spec.output_cap = 4096;
  auto r = env->RunProcess(spec);
  if (!r.ok()) {
    s.reason_ = "bubblewrap is not installed (" + r.status().message() +
                "); install the Debian package 'bubblewrap' (scripts/setup.sh)";
  } else if (r->exit_code != 0) {
    s.reason_ = "bubblewrap cannot create namespaces here (exit " + std::to_string(r->exit_code) +
                "): " + r->output;
  } else {
    s.available_ = true;
  }
  std::string why;
  s.cgroup_base_ = FindCgroupBase(*env, &why);
  s.limits_report_ =
      s.cgroup_base_.empty()
          ? "sandbox limits: setrlimit (prlimit) only; no pids cgroup: " + why +
                (geteuid() == 0 ? " — running as root, so the process limit is NOT enforced "
                                  "(RLIMIT_NPROC does not apply to root)"
                                : "")
          : "sandbox limits: setrlimit (prlimit) and a pids cgroup under " + s.cgroup_base_;
  return s;
}

Sandbox Sandbox::Unavailable(std::string reason) {
  Sandbox s;
  s.reason_ = std::move(reason);
  return s;
}

std::unique_ptr<PidsCgroup> PidsCgroup::Create(Env& env, const std::string& base,
                                               int64_t max_pids) {
  if (base.empty()) return nullptr;
  static std::atomic<uint64_t> counter{0};
  std::string dir = fmt::format("{}/maestro-{}-{}", base, getpid(), counter.fetch_add(1));
  if (env.FileExists(dir) || !env.CreateDirs(dir).ok()) return nullptr;
  // pids.max is a kernel file: written in place (no temp file, no fsync).
  auto max = env.NewAppendableFile(dir + "/pids.max");
  Status st =
      max.ok() ? (*max)->Append(max_pids > 0 ? std::to_string(max_pids) : "max") : max.status();
  if (max.ok() && st.ok()) st = (*max)->Close();
  if (!st.ok()) {
    env.RemoveFile(dir).IgnoreError();
    return nullptr;
  }
  return std::unique_ptr<PidsCgroup>(new PidsCgroup(env, std::move(dir)));
}

PidsCgroup::~PidsCgroup() {
  for (int attempt = 0; attempt < 200; ++attempt) {
    std::ifstream procs(dir_ + "/cgroup.procs");
    pid_t pid = 0;
    bool any = false;
    while (procs >> pid) {
      any = true;
      kill(pid, SIGKILL);
    }
    if (!any && env_.RemoveFile(dir_).ok() && !env_.FileExists(dir_)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  env_.RemoveFile(dir_).IgnoreError();
}

int64_t PidsCgroup::RefusedForks() const {
  std::ifstream in(dir_ + "/pids.events");
  std::string key;
  int64_t n = 0;
  while (in >> key >> n) {
    if (key == "max") return n;
  }
  return 0;
}

}  // namespace maestro::tools
