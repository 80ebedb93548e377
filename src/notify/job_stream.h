// JobStreamHub: in-process pub/sub of a running job's live deltas (text,
// reasoning, tool call start/args/result, LLM state, retries...).
//
// Where it sits: the engine publishes each delta of a job as it happens
// (Publisher() is the std::function it is given); `GET /api/local/jobs/:id/
// stream` reads them as SSE. Deltas are NOT persisted: they are the live view,
// the task's events table stays the durable record.
//
// Each job has a bounded ring buffer of its newest deltas, each with a
// sequence number, so a client that reconnects with Last-Event-ID gets what
// it missed while it is still in the buffer (the reply says `truncated` when
// deltas after its id were dropped or never arrived). Publish never blocks
// on readers: a slow or vanished client cannot slow a job.
//
// Sequence numbers across processes (scale-out, notify/delta_relay.h): the
// process that runs the job numbers its deltas; every API process shows the
// same numbers, so Last-Event-ID works whichever one a client reaches. A run
// (one claim of the job) starts at (fencing token << 32) + 1 (BeginRun): the
// token grows with every claim, so the deltas of a retry on another worker
// still sort after the dead run's. Without BeginRun numbers start at 1.
// Inject adds a delta numbered elsewhere (the relay); an older or repeated
// number is ignored.
// A reader either waits in ReadAfter or, without a thread, registers a
// waker with Watch() and reads with a zero timeout when woken.
// At most `max_jobs` buffers are kept; the least recently published is
// dropped first, its next sequence number remembered (the newest
// kEvictedKept) so a job that publishes again goes on numbering upwards.
//
// Thread safety: all methods may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/mutex.h"
#include "notify/wakers.h"

namespace maestro {

struct JobDelta {
  uint64_t seq = 0;
  Json data;
  std::string json;  // `data` serialized once at publish, for every reader
};

class JobStreamHub {
 public:
  using PublishFn = std::function<void(const std::string& job_id, const Json& delta)>;

  explicit JobStreamHub(size_t ring_capacity = 1024, size_t max_jobs = 512);

  // Appends `delta` to the job's buffer with the next sequence number and
  // wakes the readers. Returns the sequence number; `json_out` (may be null)
  // gets the delta as serialized for the readers.
  uint64_t Publish(const std::string& job_id, const Json& delta, std::string* json_out = nullptr);
  // A new run (claim) of the job starts in this process: its deltas are
  // numbered from (fencing_token << 32) + 1 on (never backwards).
  void BeginRun(const std::string& job_id, int64_t fencing_token);
  // Adds a delta another process numbered `seq` (notify/delta_relay.h) and
  // wakes the readers; false (nothing added) when the job's buffer already
  // has `seq` or a later one. A jump within a run marks what was skipped as
  // lost (`truncated` for readers before it).
  bool Inject(const std::string& job_id, uint64_t seq, Json data, std::string json);
  // A callable for the engine (valid while the hub lives).
  PublishFn Publisher();

  struct ReadResult {
    std::vector<JobDelta> deltas;  // seq > after, oldest first
    bool truncated = false;        // deltas after `after` were already dropped
  };
  // Buffered deltas with seq > after; when there are none, waits up to
  // `timeout` for one (or Stop()).
  ReadResult ReadAfter(const std::string& job_id, uint64_t after,
                       std::chrono::milliseconds timeout);
  // Like ReadAfter with no wait, but each delta carries only seq and json
  // (no copy of `data`): what a stream writes.
  ReadResult ReadJsonAfter(const std::string& job_id, uint64_t after) const;
  // Calls `wake` after each Publish for `job_id` (and at Stop) until
  // Unwatch(id). `wake` must not block (Wakers).
  uint64_t Watch(const std::string& job_id, Wakers::Fn wake) {
    return wakers_.Add(job_id, std::move(wake));
  }
  void Unwatch(uint64_t id) { wakers_.Remove(id); }
  // Wakes all readers for good (server shutdown).
  void Stop();
  bool stopped() const;

 private:
  struct Ring {
    std::deque<JobDelta> deltas;  // seq strictly increasing, not always consecutive
    uint64_t next_seq = 1;
    uint64_t lost_through = 0;  // deltas up to this seq were dropped or never came
    uint64_t touched = 0;       // publish counter at the last publish (LRU)
  };
  Ring& RingFor(const std::string& job_id) REQUIRES(mu_);
  void Append(Ring& ring, JobDelta delta) REQUIRES(mu_);
  ReadResult Collect(const std::string& job_id, uint64_t after, bool with_data = true) const
      REQUIRES(mu_);
  void EvictIfFull() REQUIRES(mu_);

  static constexpr size_t kEvictedKept = 8192;

  const size_t capacity_;
  const size_t max_jobs_;
  mutable Mutex mu_;
  CondVar cv_;
  std::map<std::string, Ring> rings_ GUARDED_BY(mu_);
  // Evicted jobs' next numbers, with the eviction's count; evicted_order_
  // lists (job, count) oldest first and forgets an entry only if it is
  // still that eviction's.
  struct Evicted {
    uint64_t next_seq = 1;
    uint64_t count = 0;
  };
  std::map<std::string, Evicted> evicted_ GUARDED_BY(mu_);
  std::deque<std::pair<std::string, uint64_t>> evicted_order_ GUARDED_BY(mu_);
  uint64_t evictions_ GUARDED_BY(mu_) = 0;
  uint64_t publishes_ GUARDED_BY(mu_) = 0;
  bool stopped_ GUARDED_BY(mu_) = false;
  Wakers wakers_;
};

}  // namespace maestro
