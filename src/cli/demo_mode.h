// DemoLlm: demo mode of `maestro serve` — when no LLM server is configured
// (MAESTRO_LLM_BASE_URL / llm.base_url unset) serve starts the bundled
// maestro-fakellm with the committed demo script (demo/demo-script.yaml) on a
// free loopback port and points llm.base_url at it, so a first-time user can
// see every UI feature (streaming, tool cards, approvals, ASK, cancel)
// without a model. The UI is told through GET /api/info {"demo": true}.
//
// Where it sits: cli wiring, before the runtime starts (the engine reads
// llm.base_url once). The child is stopped (SIGTERM, then SIGKILL) when the
// DemoLlm is destroyed, and dies with its parent (PDEATHSIG) if serve crashes.
//
// Also here: FindUiDir, the search for the built UI served at `/`.
//
// Thread safety: built and destroyed on the main thread only.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <thread>

#include "core/config.h"
#include "core/status.h"

namespace maestro::cli {

class DemoLlm {
 public:
  ~DemoLlm();
  DemoLlm(const DemoLlm&) = delete;
  DemoLlm& operator=(const DemoLlm&) = delete;

  // Starts `fakellm --host 127.0.0.1 --port 0 --script script` and waits
  // (up to 10 s) for its "listening HOST:PORT" line.
  static Result<std::unique_ptr<DemoLlm>> Start(const std::string& fakellm,
                                                const std::string& script);
  // e.g. http://127.0.0.1:40123/v1
  const std::string& base_url() const { return base_url_; }

 private:
  DemoLlm() = default;
  pid_t pid_ = -1;
  std::string base_url_;
  // Forwards the child's later stdout to our stderr until it exits, so its
  // writes never block on a full pipe or die of SIGPIPE.
  std::thread drain_;
};

// Paths searched when the config names none; `exe` is /proc/self/exe.
// The fakellm binary: demo.fakellm, else next to `exe`, else the build
// tree's ../fakellm/maestro-fakellm.
Result<std::string> FindFakeLlm(const Config& cfg, const std::string& exe);
// The demo script: demo.script, else ./demo/demo-script.yaml, else the
// source checkout's (MAESTRO_SOURCE_DIR, compiled in).
Result<std::string> FindDemoScript(const Config& cfg);
// The built UI: ui.dir if set (and it has an index.html), else ./ui/dist,
// else the source checkout's ui/dist. Empty when there is none (serve then
// answers `/` with how to build it).
std::string FindUiDir(const Config& cfg);

// True when MaybeStartDemo would start the demo model: no llm.base_url and
// demo.enabled not false.
bool DemoWanted(const Config& cfg);

// When cfg.llm.base_url is empty and demo.enabled (MAESTRO_DEMO) is not
// false: starts the demo model and points
// cfg.llm.base_url/model at it. Returns nullptr (and changes nothing) when a
// server is configured.
Result<std::unique_ptr<DemoLlm>> MaybeStartDemo(Config& cfg);

}  // namespace maestro::cli
