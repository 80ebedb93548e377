#include "core/crash_point.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>

namespace maestro {
namespace {

struct Armed {
  std::string name;
  long at = 1;
  std::atomic<long> passed{0};
};

Armed* Load() {
  const char* env = std::getenv("MAESTRO_CRASH_AT");
  if (env == nullptr || *env == '\0') return nullptr;
  auto* a = new Armed();  // lives for the process
  std::string spec = env;
  if (auto colon = spec.find(':'); colon != std::string::npos) {
    a->at = std::max(1L, std::strtol(spec.c_str() + colon + 1, nullptr, 10));
    spec.resize(colon);
  }
  a->name = spec;
  return a;
}

}  // namespace

void CrashPoint(const char* name) {
  static Armed* armed = Load();
  if (armed == nullptr || armed->name != name) return;
  if (armed->passed.fetch_add(1) + 1 < armed->at) return;
  static const char kMsg[] = "maestro: crash point reached, SIGKILL\n";
  (void)!write(2, kMsg, sizeof kMsg - 1);
  kill(getpid(), SIGKILL);
}

}  // namespace maestro
