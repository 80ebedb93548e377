// Context storage at process start: the `context_storage` config section
// turned into a ContextConfig, the data dir reconciled with the database
// (seed 002: a directory in the wrong place is moved, a missing one is
// reported), and the janitor that removes completed task directories after
// `cleanup_days`. `maestro serve` and `maestro worker` call these once before
// their workers start.
//
// Thread safety: ContextJanitor's Start/Stop from one thread.
#pragma once

#include <string>

#include "context/context_config.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/env.h"
#include "core/periodic_task.h"
#include "store/store.h"

namespace maestro::context {

// Validates `cfg.context_storage` (errors start with its file:line:col);
// context_length comes from the default LLM profile.
Result<ContextConfig> ContextConfigFromConfig(const Config& cfg);

// Creates contexts/{running,paused,completed}, reconciles them with `store`
// and logs what was moved, missing or orphaned.
Status ReconcileContextsAtStart(const std::string& data_dir, Store& store,
                                Env* env = Env::Default());

// Runs ContextDirs::Cleanup now and then every `interval_ms`.
class ContextJanitor {
 public:
  ContextJanitor(std::string data_dir, Store& store, int cleanup_days, int64_t interval_ms,
                 Clock* clock = SystemClock::Default(), Env* env = Env::Default());
  ~ContextJanitor();
  void Start();
  void Stop();
  // One pass; returns how many directories were removed.
  Result<int> RunOnce();

 private:
  const std::string data_dir_;
  Store& store_;
  const int cleanup_days_;
  const int64_t interval_ms_;
  Clock* clock_;
  Env* env_;
  PeriodicTask loop_;  // last: stopped before the members it uses go
};

}  // namespace maestro::context
