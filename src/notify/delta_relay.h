// The delta relay: a running job's live deltas from the process that runs it
// to the API processes of other hosts (scale-out on PostgreSQL).
//
// Why PostgreSQL NOTIFY and not an endpoint on each worker: every process
// already holds a connection to the database and the API processes already
// LISTEN on it (store wake-ups); a worker needs no listening port, no address
// registry and no credentials between processes, and nothing new runs beside
// PostgreSQL. The cost is one NOTIFY per batch (bench/relay: figures in
// docs/operations.md). SQLite (one process) needs none of it: the deltas
// stay in the process's JobStreamHub.
//
// The sending side (DeltaRelay): Publish queues a delta the local hub has
// numbered; one thread sends what gathered within `linger` as few NOTIFY
// payloads as fit PostgreSQL's 8000-byte limit, in order, on one connection
// at a time — so they arrive in order. A delta too big for one payload goes
// in base64 chunks. Publish never blocks on the database: past
// `max_pending_bytes` the newest deltas are dropped (counted), and a batch
// that fails to send is dropped too — the live view is best effort; the
// API's ring then marks the gap and readers see `truncated`; the task's
// events stay the durable record.
//
// The receiving side (DeltaRelayReader): decodes payloads, skips the ones
// this process sent (its own deltas are already in its hub), reassembles
// chunks (bounded) and hands each delta to JobStreamHub::Inject with the
// sender's sequence number, so every API process shows the same ids.
//
// Payloads (JSON; `o` the sender's random origin id):
//   {"o":"…","d":[["<job id>",<seq>,<delta>],…]}        whole deltas
//   {"o":"…","c":["<job id>",<seq>,<part>,<parts>,"<base64>"]}  a chunk
//
// Thread safety: DeltaRelay's methods may be called from any thread;
// DeltaRelayReader's Receive from one thread (the LISTEN thread).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/json.h"
#include "core/mutex.h"
#include "core/status.h"

namespace maestro::notify {

// The channel the relay's NOTIFYs travel on.
inline constexpr const char* kDeltasChannel = "maestro_deltas";

struct DeltaRelayOptions {
  std::string origin;                           // this process's id (Receive skips it)
  size_t max_payload = 7900;                    // bytes; PostgreSQL refuses 8000 and more
  std::chrono::milliseconds linger{5};          // how long a batch gathers
  size_t max_pending_bytes = 8u * 1024 * 1024;  // queued and not yet sent
};

class DeltaRelay {
 public:
  // Sends payloads as NOTIFYs on kDeltasChannel, in order (PgStore::Notify).
  using SendFn = std::function<Status(const std::vector<std::string>& payloads)>;

  DeltaRelay(DeltaRelayOptions options, SendFn send);
  ~DeltaRelay();  // Stop()
  DeltaRelay(const DeltaRelay&) = delete;
  DeltaRelay& operator=(const DeltaRelay&) = delete;

  // Queues the job's delta `json`, numbered `seq` by this process's hub.
  void Publish(const std::string& job_id, uint64_t seq, const std::string& json) EXCLUDES(mu_);
  // Sends what is queued, then ends the thread. Idempotent.
  void Stop() EXCLUDES(mu_);

  struct Stats {
    uint64_t deltas = 0;       // sent
    uint64_t payloads = 0;     // NOTIFYs sent
    uint64_t dropped = 0;      // deltas dropped (queue full or a failed send)
    uint64_t send_errors = 0;  // failed sends
  };
  Stats stats() const EXCLUDES(mu_);

  // The payloads one batch of deltas makes (the sending thread's encoding;
  // public for the tests and the bench).
  struct Item {
    std::string job_id;
    uint64_t seq = 0;
    std::string json;
  };
  static std::vector<std::string> Encode(const std::string& origin, const std::vector<Item>& items,
                                         size_t max_payload);

 private:
  void Run() EXCLUDES(mu_);

  const DeltaRelayOptions options_;
  const SendFn send_;
  mutable Mutex mu_;
  CondVar cv_;
  std::vector<Item> pending_ GUARDED_BY(mu_);
  size_t pending_bytes_ GUARDED_BY(mu_) = 0;
  bool stop_ GUARDED_BY(mu_) = false;
  Stats stats_ GUARDED_BY(mu_);
  std::thread thread_;
};

class DeltaRelayReader {
 public:
  using InjectFn =
      std::function<void(const std::string& job_id, uint64_t seq, Json data, std::string json)>;

  DeltaRelayReader(std::string own_origin, InjectFn inject);

  // One NOTIFY payload. A malformed one is skipped with a warning.
  void Receive(const std::string& payload);

  size_t partial_chunks() const { return chunks_.size(); }

 private:
  struct Partial {
    int parts = 0;
    std::vector<std::string> got;  // base64 text per part, "" = missing
    int have = 0;
  };
  void Deliver(const std::string& job_id, uint64_t seq, Json data);

  const std::string own_origin_;
  const InjectFn inject_;
  // Chunked deltas being reassembled, oldest first; bounded (kMaxPartial).
  std::map<std::pair<std::string, uint64_t>, Partial> chunks_;
  std::deque<std::pair<std::string, uint64_t>> chunk_order_;
};

}  // namespace maestro::notify
