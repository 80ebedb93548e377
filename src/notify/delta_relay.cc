#include "notify/delta_relay.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/base64.h"

namespace maestro::notify {

namespace {

// Chunked deltas kept while their other parts are on the way: a sender
// sends all parts of one delta back to back, so a few suffice.
constexpr size_t kMaxPartial = 64;

std::string Quoted(const std::string& s) { return DumpJson(Json(s)); }

}  // namespace

DeltaRelay::DeltaRelay(DeltaRelayOptions options, SendFn send)
    : options_(std::move(options)), send_(std::move(send)) {
  thread_ = std::thread([this] { Run(); });
}

DeltaRelay::~DeltaRelay() { Stop(); }

void DeltaRelay::Publish(const std::string& job_id, uint64_t seq, const std::string& json) {
  {
    MutexLock lock(&mu_);
    if (stop_) return;
    if (pending_bytes_ + json.size() > options_.max_pending_bytes) {
      ++stats_.dropped;
      return;
    }
    pending_bytes_ += json.size();
    pending_.push_back(Item{job_id, seq, json});
  }
  cv_.Signal();
}

void DeltaRelay::Stop() {
  {
    MutexLock lock(&mu_);
    if (stop_ && !thread_.joinable()) return;
    stop_ = true;
  }
  cv_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

DeltaRelay::Stats DeltaRelay::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

void DeltaRelay::Run() {
  for (;;) {
    std::vector<Item> batch;
    {
      MutexLock lock(&mu_);
      cv_.Wait(&mu_, [&]() REQUIRES(mu_) { return stop_ || !pending_.empty(); });
      if (pending_.empty()) return;  // stopped with nothing left
      // Let a burst gather (a model streams tokens a few ms apart) so one
      // NOTIFY carries many; a stop sends at once.
      if (!stop_) cv_.WaitFor(&mu_, options_.linger, [&]() REQUIRES(mu_) { return stop_; });
      batch.swap(pending_);
      pending_bytes_ = 0;
    }
    std::vector<std::string> payloads = Encode(options_.origin, batch, options_.max_payload);
    Status st = send_(payloads);
    MutexLock lock(&mu_);
    if (st.ok()) {
      stats_.deltas += batch.size();
      stats_.payloads += payloads.size();
    } else {
      // Not retried: the live view is best effort, and a database that
      // refuses now would only make the queue grow. Readers see the gap.
      stats_.dropped += batch.size();
      if (stats_.send_errors++ % 100 == 0) {
        spdlog::warn("delta relay: {} live deltas not sent: {}", batch.size(), st.ToString());
      }
    }
  }
}

std::vector<std::string> DeltaRelay::Encode(const std::string& origin,
                                            const std::vector<Item>& items, size_t max_payload) {
  std::vector<std::string> out;
  const std::string head = "{\"o\":" + Quoted(origin) + ",\"d\":[";
  std::string current;
  auto flush = [&] {
    if (current.empty()) return;
    out.push_back(head + current + "]}");
    current.clear();
  };
  for (const Item& item : items) {
    std::string whole =
        "[" + Quoted(item.job_id) + "," + std::to_string(item.seq) + "," + item.json + "]";
    if (head.size() + whole.size() + 2 <= max_payload) {
      if (head.size() + current.size() + 1 + whole.size() + 2 > max_payload) flush();
      if (!current.empty()) current += ",";
      current += whole;
      continue;
    }
    // Too big for one payload: base64 parts, each decoded on its own.
    flush();
    const std::string chunk_head = "{\"o\":" + Quoted(origin) + ",\"c\":[" + Quoted(item.job_id) +
                                   "," + std::to_string(item.seq) + ",";
    // Room for ",<part>,<parts>,\"\"]}" with up to 9-digit numbers.
    const size_t room =
        max_payload > chunk_head.size() + 32 ? max_payload - chunk_head.size() - 32 : 4;
    const size_t raw_per_part = std::max<size_t>(3, room / 4 * 3);
    const size_t parts = (item.json.size() + raw_per_part - 1) / raw_per_part;
    for (size_t p = 0; p < parts; ++p) {
      std::string_view slice = std::string_view(item.json).substr(p * raw_per_part, raw_per_part);
      out.push_back(chunk_head + std::to_string(p) + "," + std::to_string(parts) + ",\"" +
                    Base64Encode(slice) + "\"]}");
    }
  }
  flush();
  return out;
}

DeltaRelayReader::DeltaRelayReader(std::string own_origin, InjectFn inject)
    : own_origin_(std::move(own_origin)), inject_(std::move(inject)) {}

void DeltaRelayReader::Deliver(const std::string& job_id, uint64_t seq, Json data) {
  std::string json = DumpJson(data);
  inject_(job_id, seq, std::move(data), std::move(json));
}

void DeltaRelayReader::Receive(const std::string& payload) {
  auto parsed = ParseJson(payload);
  if (!parsed.ok() || !parsed->is_object()) {
    spdlog::warn("delta relay: a payload that is not a JSON object skipped");
    return;
  }
  const Json& p = *parsed;
  if (!p.contains("o") || !p["o"].is_string()) return;
  if (p["o"].get<std::string>() == own_origin_) return;  // already in this process's hub
  if (p.contains("d") && p["d"].is_array()) {
    for (const Json& d : p["d"]) {
      if (!d.is_array() || d.size() != 3 || !d[0].is_string() || !d[1].is_number_unsigned()) {
        continue;
      }
      Deliver(d[0].get<std::string>(), d[1].get<uint64_t>(), d[2]);
    }
    return;
  }
  if (!p.contains("c") || !p["c"].is_array()) return;
  const Json& c = p["c"];
  if (c.size() != 5 || !c[0].is_string() || !c[1].is_number_unsigned() ||
      !c[2].is_number_unsigned() || !c[3].is_number_unsigned() || !c[4].is_string()) {
    return;
  }
  const auto key = std::make_pair(c[0].get<std::string>(), c[1].get<uint64_t>());
  const uint64_t part = c[2].get<uint64_t>();
  const uint64_t parts = c[3].get<uint64_t>();
  // A delta is at most the relay's queue (8 MiB) in ~5.9 KB parts.
  if (parts == 0 || parts > 4096 || part >= parts) return;
  auto it = chunks_.find(key);
  if (it == chunks_.end()) {
    while (chunks_.size() >= kMaxPartial && !chunk_order_.empty()) {
      chunks_.erase(chunk_order_.front());
      chunk_order_.pop_front();
    }
    Partial fresh;
    fresh.parts = static_cast<int>(parts);
    fresh.got.resize(parts);
    it = chunks_.emplace(key, std::move(fresh)).first;
    chunk_order_.push_back(key);
  }
  Partial& partial = it->second;
  if (static_cast<uint64_t>(partial.parts) != parts || !partial.got[part].empty()) return;
  partial.got[part] = c[4].get<std::string>();
  if (++partial.have < partial.parts) return;
  std::string json;
  bool ok = true;
  for (const std::string& b64 : partial.got) {
    auto raw = Base64Decode(b64);
    if (!raw) {
      ok = false;
      break;
    }
    json += *raw;
  }
  chunks_.erase(it);
  chunk_order_.erase(std::remove(chunk_order_.begin(), chunk_order_.end(), key),
                     chunk_order_.end());
  auto data = ok ? ParseJson(json) : Result<Json>(InvalidArgument("bad base64"));
  if (!data.ok()) {
    spdlog::warn("delta relay: a chunked delta of job {} did not decode; skipped", key.first);
    return;
  }
  inject_(key.first, key.second, std::move(data).value(), std::move(json));
}

}  // namespace maestro::notify
