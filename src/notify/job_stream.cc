#include "notify/job_stream.h"

namespace maestro {

JobStreamHub::JobStreamHub(size_t ring_capacity, size_t max_jobs)
    : capacity_(ring_capacity == 0 ? 1 : ring_capacity), max_jobs_(max_jobs == 0 ? 1 : max_jobs) {}

uint64_t JobStreamHub::Publish(const std::string& job_id, const Json& delta) {
  uint64_t seq = 0;
  {
    MutexLock lock(&mu_);
    if (rings_.find(job_id) == rings_.end()) EvictIfFull();
    Ring& ring = rings_[job_id];
    seq = ring.next_seq++;
    ring.deltas.push_back(JobDelta{seq, delta, DumpJson(delta)});
    if (ring.deltas.size() > capacity_) ring.deltas.pop_front();
    ring.touched = ++publishes_;
  }
  cv_.SignalAll();
  wakers_.Wake(job_id);
  return seq;
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
    rings_.erase(oldest);
  }
}

JobStreamHub::ReadResult JobStreamHub::Collect(const std::string& job_id, uint64_t after,
                                               bool with_data) const {
  ReadResult out;
  auto it = rings_.find(job_id);
  if (it == rings_.end()) return out;
  const auto& deltas = it->second.deltas;
  if (!deltas.empty() && deltas.front().seq > after + 1) out.truncated = true;
  // Sequence numbers in a ring are consecutive: start right after `after`.
  size_t first = 0;
  if (!deltas.empty() && after >= deltas.front().seq) {
    first = static_cast<size_t>(after - deltas.front().seq + 1);
  }
  for (size_t i = first; i < deltas.size(); ++i) {
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
    return it != rings_.end() && it->second.next_seq > after + 1;
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
