// `maestro serve` (API + workers) and `maestro worker` (workers only).
//
// Startup order matters: the store is opened, then serve claims its listen
// address exclusively (a second serve on a busy port exits 1 naming
// MAESTRO_LISTEN, before it starts a demo model or claims any job), then the
// demo model (cli/demo_mode.h), the workers and finally the HTTP threads.
//
// Thread safety: main thread only; returns after SIGTERM/SIGINT.
#pragma once

#include <string>

namespace maestro::cli {

int Serve(const std::string& config_path, bool with_api, int workers_override = -1);

}  // namespace maestro::cli
