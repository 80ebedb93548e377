#include "cli/demo_mode.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "core/env.h"

#ifndef MAESTRO_SOURCE_DIR
#define MAESTRO_SOURCE_DIR "."
#endif

namespace maestro::cli {
namespace fs = std::filesystem;
namespace {

bool IsFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

std::string SelfExe() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

// Reads one line from `fd` within `timeout`; the child prints
// "listening HOST:PORT" first.
Result<std::string> ReadLine(int fd, std::chrono::milliseconds timeout) {
  std::string line;
  auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    end - std::chrono::steady_clock::now())
                                    .count());
    if (poll(&p, 1, std::max(left, 1)) <= 0) continue;
    char c = 0;
    ssize_t n = read(fd, &c, 1);
    if (n <= 0) return Unavailable("maestro-fakellm exited before listening");
    if (c == '\n') return line;
    line.push_back(c);
  }
  return Unavailable("maestro-fakellm did not start within 10 s");
}

// Where `cmake --install` puts the data files: <prefix>/share/maestro next
// to <prefix>/bin/maestro.
fs::path InstalledShareDir() {
  std::string exe = SelfExe();
  return exe.empty() ? fs::path() : fs::path(exe).parent_path() / ".." / "share" / "maestro";
}

}  // namespace

DemoLlm::~DemoLlm() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    bool reaped = false;
    for (int i = 0; i < 100 && !reaped; ++i) {  // up to 5 s, then force
      reaped = waitpid(pid_, nullptr, WNOHANG) == pid_;
      if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!reaped) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  if (drain_.joinable()) drain_.join();  // EOF once the child is gone
}

Result<std::unique_ptr<DemoLlm>> DemoLlm::Start(const std::string& fakellm,
                                                const std::string& script) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return Internal("pipe failed");
  std::vector<std::string> args = {fakellm,    "--host", "127.0.0.1", "--port",      "0",
                                   "--script", script,   "--model",   "maestro-demo"};
  // The child must not outlive serve (die_with_parent), and starts with an
  // empty signal mask, not serve's blocked SIGTERM/SIGINT.
  ChildSpec child;
  child.argv = std::move(args);
  child.stdout_fd = out[1];
  child.new_process_group = false;
  child.die_with_parent = true;
  auto started = Env::Default()->SpawnChild(child);
  if (!started.ok()) {
    close(out[0]);
    close(out[1]);
    return started.status();
  }
  pid_t pid = *started;
  close(out[1]);
  std::unique_ptr<DemoLlm> demo(new DemoLlm());
  demo->pid_ = pid;  // from here the destructor stops it on any error
  auto line = ReadLine(out[0], std::chrono::seconds(10));
  int fd = out[0];
  demo->drain_ = std::thread([fd] {
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
      if (write(STDERR_FILENO, buf, static_cast<size_t>(n)) < 0) break;
    }
    close(fd);
  });
  if (!line.ok()) return line.status();
  const std::string prefix = "listening ";
  if (line->rfind(prefix, 0) != 0) return Internal("maestro-fakellm printed: " + *line);
  demo->base_url_ = "http://" + line->substr(prefix.size()) + "/v1";
  return demo;
}

Result<std::string> FindFakeLlm(const Config& cfg, const std::string& exe) {
  if (!cfg.demo_fakellm.empty()) {
    if (IsFile(cfg.demo_fakellm)) return cfg.demo_fakellm;
    return InvalidArgument("demo.fakellm: no such file " + cfg.demo_fakellm, "demo.fakellm");
  }
  fs::path dir = fs::path(exe).parent_path();
  for (const fs::path& p : {dir / "maestro-fakellm", dir / ".." / "fakellm" / "maestro-fakellm"}) {
    if (IsFile(p)) return p.lexically_normal().string();
  }
  return NotFound("demo mode needs maestro-fakellm next to " + exe +
                  " (build the maestro-fakellm target) or an LLM server in MAESTRO_LLM_BASE_URL");
}

Result<std::string> FindDemoScript(const Config& cfg) {
  if (!cfg.demo_script.empty()) {
    if (IsFile(cfg.demo_script)) return cfg.demo_script;
    return InvalidArgument("demo.script: no such file " + cfg.demo_script, "demo.script");
  }
  for (const fs::path& p :
       {fs::path("demo/demo-script.yaml"), InstalledShareDir() / "demo" / "demo-script.yaml",
        fs::path(MAESTRO_SOURCE_DIR) / "demo" / "demo-script.yaml"}) {
    if (IsFile(p)) return fs::absolute(p).lexically_normal().string();
  }
  return NotFound("demo mode: demo/demo-script.yaml not found (set MAESTRO_DEMO_SCRIPT)");
}

std::string FindUiDir(const Config& cfg) {
  if (!cfg.ui_dir.empty()) {  // named explicitly: that one or none
    if (IsFile(fs::path(cfg.ui_dir) / "index.html")) {
      return fs::absolute(cfg.ui_dir).lexically_normal().string();
    }
    spdlog::warn("ui.dir {} has no index.html: the web UI is not served", cfg.ui_dir);
    return "";
  }
  for (const fs::path& c : {fs::path("ui/dist"), InstalledShareDir() / "ui" / "dist",
                            fs::path(MAESTRO_SOURCE_DIR) / "ui" / "dist"}) {
    if (IsFile(c / "index.html")) return fs::absolute(c).lexically_normal().string();
  }
  return "";
}

bool DemoWanted(const Config& cfg) { return cfg.llm.base_url.empty() && cfg.demo_enabled; }

Result<std::unique_ptr<DemoLlm>> MaybeStartDemo(Config& cfg) {
  if (!DemoWanted(cfg)) return std::unique_ptr<DemoLlm>();
  MAESTRO_ASSIGN_OR_RETURN(std::string fakellm, FindFakeLlm(cfg, SelfExe()));
  MAESTRO_ASSIGN_OR_RETURN(std::string script, FindDemoScript(cfg));
  MAESTRO_ASSIGN_OR_RETURN(auto demo, DemoLlm::Start(fakellm, script));
  cfg.llm.base_url = demo->base_url();
  // The demo's package request must be approvable without downloading
  // anything: unless the config names a pip installer, a stand-in one only
  // writes a note into the (sandboxed) target dir.
  Json& installers = cfg.packages["installers"];
  if (!installers.is_object()) installers = Json::object();
  if (!installers.contains("pip")) {
    installers["pip"] =
        "echo 'demo mode: {name}{version_spec} was not really installed' > "
        "{target}/DEMO-INSTALL.txt";
  }
  spdlog::warn(
      "DEMO MODE: no LLM server configured (MAESTRO_LLM_BASE_URL); answering with the "
      "scripted demo model at {} (script {})",
      demo->base_url(), script);
  return demo;
}

}  // namespace maestro::cli
