#include "notify/job_stream.h"

#include <algorithm>

namespace maestro {

JobStreamHub::JobStreamHub(size_t ring_capacity, size_t max_jobs)
    : capacity_(ring_capacity == 0 ? 1 : ring_capacity), max_jobs_(max_jobs == 0 ? 1 : max_jobs) {}

namespace {

// The first sequence number of a run (job_stream.h).
uint64_t RunStart(int64_t fencing_token) {
  return fencing_token > 0 ? (static_cast<uint64_t>(fencing_token) << 32) + 1 : 1;
}

}  // namespace

JobStreamHub::Ring& JobStreamHub::RingFor(const std::string& job_id) {
  auto it = rings_.find(job_id);
  if (it == rings_.end()) {
    EvictIfFull();
    it = rings_.emplace(job_id, Ring{}).first;
    // A job whose buffer was evicted (a quiet running job while hundreds of
    // others started) goes on with its numbers, never from 1 again: the API
    // processes would drop those as old. What the buffer held is lost.
    if (auto t = evicted_.find(job_id); t != evicted_.end()) {
      it->second.next_seq = t->second.next_seq;
      it->second.lost_through = t->second.next_seq - 1;
      evicted_.erase(t);
    }
  }
  it->second.touched = ++publishes_;
  return it->second;
}

void JobStreamHub::Append(Ring& ring, JobDelta delta) {
  ring.next_seq = delta.seq + 1;
  ring.deltas.push_back(std::move(delta));
  if (ring.deltas.size() > capacity_) {
    ring.lost_through = std::max(ring.lost_through, ring.deltas.front().seq);
    ring.deltas.pop_front();
  }
}

uint64_t JobStreamHub::Publish(const std::string& job_id, const Json& delta,
                               std::string* json_out) {
  uint64_t seq = 0;
  std::string json = DumpJson(delta);
  if (json_out) *json_out = json;
  {
    MutexLock lock(&mu_);
    Ring& ring = RingFor(job_id);
    seq = ring.next_seq;
    Append(ring, JobDelta{seq, delta, std::move(json)});
  }
  cv_.SignalAll();
  wakers_.Wake(job_id);
  return seq;
}

void JobStreamHub::BeginRun(const std::string& job_id, int64_t fencing_token) {
  MutexLock lock(&mu_);
  Ring& ring = RingFor(job_id);
  ring.next_seq = std::max(ring.next_seq, RunStart(fencing_token));
}

bool JobStreamHub::Inject(const std::string& job_id, uint64_t seq, Json data, std::string json) {
  {
    MutexLock lock(&mu_);
    Ring& ring = RingFor(job_id);
    if (seq < ring.next_seq) return false;
    // A gap inside one run (the same high half) is deltas that never came
    // (a LISTEN reconnect, a dropped batch); a new run starting at its +1 is
    // not a loss, nor is the first delta of a run this process joins late.
    const bool run_start = (seq & 0xffffffffu) == 1;
    if (seq > ring.next_seq && !run_start) ring.lost_through = seq - 1;
    Append(ring, JobDelta{seq, std::move(data), std::move(json)});
  }
  cv_.SignalAll();
  wakers_.Wake(job_id);
  return true;
}

JobStreamHub::PublishFn JobStreamHub::Publisher() {
  return [this](const std::string& job_id, const Json& delta) { Publish(job_id, delta); };
}

void JobStreamHub::EvictIfFull() {
  while (rings_.size() >= max_jobs_) {
    auto oldest = rings_.begin();
    for (auto it = rings_.begin(); it != rings_.end(); ++it) {
      if (it->second.touched < oldest->second.touched) oldest = it;
    }
    // Its next number is kept (a few bytes, bounded) for when it comes back.
    const uint64_t count = ++evictions_;
    evicted_[oldest->first] = Evicted{oldest->second.next_seq, count};
    evicted_order_.emplace_back(oldest->first, count);
    while (evicted_order_.size() > kEvictedKept) {
      const auto& [job, when] = evicted_order_.front();
      if (auto t = evicted_.find(job); t != evicted_.end() && t->second.count == when) {
        evicted_.erase(t);
      }
      evicted_order_.pop_front();
    }
    rings_.erase(oldest);
  }
}

JobStreamHub::ReadResult JobStreamHub::Collect(const std::string& job_id, uint64_t after,
                                               bool with_data) const {
  ReadResult out;
  auto it = rings_.find(job_id);
  if (it == rings_.end()) return out;
  const auto& deltas = it->second.deltas;
  if (after < it->second.lost_through) out.truncated = true;
  // Sequence numbers only grow: the first one after `after`.
  auto first = std::partition_point(deltas.begin(), deltas.end(),
                                    [after](const JobDelta& d) { return d.seq <= after; });
  for (size_t i = static_cast<size_t>(first - deltas.begin()); i < deltas.size(); ++i) {
    const JobDelta& d = deltas[i];
    if (with_data) {
      out.deltas.push_back(d);
    } else {
      out.deltas.push_back(JobDelta{d.seq, Json(), d.json});
    }
  }
  return out;
}

JobStreamHub::ReadResult JobStreamHub::ReadJsonAfter(const std::string& job_id,
                                                     uint64_t after) const {
  MutexLock lock(&mu_);
  return Collect(job_id, after, /*with_data=*/false);
}

JobStreamHub::ReadResult JobStreamHub::ReadAfter(const std::string& job_id, uint64_t after,
                                                 std::chrono::milliseconds timeout) {
  MutexLock lock(&mu_);
  ReadResult out = Collect(job_id, after);
  if (!out.deltas.empty() || stopped_) return out;
  cv_.WaitFor(&mu_, timeout, [&]() REQUIRES(mu_) {
    if (stopped_) return true;
    auto it = rings_.find(job_id);
    return it != rings_.end() && !it->second.deltas.empty() && it->second.deltas.back().seq > after;
  });
  return Collect(job_id, after);
}

void JobStreamHub::Stop() {
  {
    MutexLock lock(&mu_);
    stopped_ = true;
  }
  cv_.SignalAll();
  wakers_.WakeAll();
}

bool JobStreamHub::stopped() const {
  MutexLock lock(&mu_);
  return stopped_;
}

}  // namespace maestro
