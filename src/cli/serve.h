// `maestro serve` (API + workers) and `maestro worker` (workers only).
//
// Startup order matters: the store is opened — waiting up to
// startup_wait_ms for a PostgreSQL that is not up yet and, for a worker, for
// the data dir's marker serve writes (cli/startup_wait.h; SIGTERM during
// the wait exits 0) — then serve claims its listen
// address exclusively (a second serve on a busy port exits 1 naming
// MAESTRO_LISTEN, before it starts a demo model or claims any job), then the
// demo model (cli/demo_mode.h), the workers and finally the HTTP threads.
//
// Thread safety: main thread only; returns after SIGTERM/SIGINT.
#pragma once

#include <string>

namespace maestro::cli {

// `health_listen_override`: a worker's --health-listen HOST:PORT ("" = the
// config's `health_listen`): its /api/live and /api/ready, served from
// before the store wait (api/readiness.h).
int Serve(const std::string& config_path, bool with_api, int workers_override = -1,
          const std::string& health_listen_override = "");

}  // namespace maestro::cli
