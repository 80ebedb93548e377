// StoreMetrics: the role of the Store (store/store.h) that /metrics reads —
// jobs per status, and the counters and histograms summed from the events
// and webhook deliveries (store/api_types.h ApiMetrics).
//
// Who uses it: the API's /metrics route (api/).
//
// Thread safety: every method may be called from any thread concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/status.h"
#include "store/api_types.h"
#include "store/unsupported.h"

namespace maestro {

class StoreMetrics {
 public:
  virtual ~StoreMetrics() = default;

  // Jobs per status, for /metrics.
  virtual Result<std::map<std::string, int64_t>> CountJobsByStatus() = 0;
  virtual Result<ApiMetrics> ComputeApiMetrics() { return NotSupportedByStore(); }
};

}  // namespace maestro
