// edge_client.h: the Boost.Asio clients of edge_bench, all on loopback.
//
//   Fetch       one request on its own connection, with a deadline over the
//               whole exchange (connect, write, read the full response)
//   SseClient   a job stream subscriber: counts the deltas it gets and how
//               late they are (`at` is stamped by the server on publish)
//   SlowClient  slowloris: a request head that never ends, one byte a second
//   IdleClient  connects and sends nothing (the connection-cap flood)
//
// Threading: every object lives on the one io_context it was created for and
// is only touched from that context's thread (start it with asio::post). The
// stats structs are shared by many clients of one thread; the main thread
// reads their atomics while they run and the rest only after Barrier().
#pragma once

#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "edge_http.h"

namespace edge {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Steady = std::chrono::steady_clock;

inline double MsSince(Steady::time_point t0) {
  return std::chrono::duration<double, std::milli>(Steady::now() - t0).count();
}

// Wall clock in ms with µs precision: the server stamps `at` from its
// system_clock (ms), so the delay must be read from the same clock.
inline double WallMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline tcp::endpoint Loopback(uint16_t port) {
  return tcp::endpoint(asio::ip::address_v4::loopback(), port);
}

// Runs `fn` on `io`'s thread and waits for it; also a memory barrier for
// the stats that thread writes.
inline void Barrier(
    asio::io_context& io, std::function<void()> fn = [] {}) {
  // The promise is shared: the io thread may still be inside set_value()
  // when the waiting thread returns.
  auto done = std::make_shared<std::promise<void>>();
  auto future = done->get_future();
  asio::post(io, [&fn, done] {
    fn();
    done->set_value();
  });
  future.wait();
}

// A request with `Connection: close`, so every probe is a new connection.
inline std::string Request(const std::string& method, const std::string& path,
                           const std::string& token = "", const std::string& body = "") {
  std::string r = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  if (!token.empty()) r += "Authorization: Bearer " + token + "\r\n";
  if (!body.empty() || method == "POST") {
    r +=
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  return r + "\r\n" + body;
}

struct FetchResult {
  enum Kind { kOk, kTimeout, kError } kind = kError;
  int status = 0;  // when kOk
  std::string body;
  double ms = 0;  // from the start to the full response, or to the failure
};

class Fetch : public std::enable_shared_from_this<Fetch> {
 public:
  using Done = std::function<void(const FetchResult&)>;

  // Must be called on `io`'s thread.
  static void Start(asio::io_context& io, uint16_t port, std::string request,
                    Steady::duration timeout, Done done) {
    std::shared_ptr<Fetch> f(new Fetch(io, std::move(request), std::move(done)));
    f->Run(port, timeout);
  }

 private:
  Fetch(asio::io_context& io, std::string request, Done done)
      : socket_(io), timer_(io), request_(std::move(request)), done_(std::move(done)) {}

  void Run(uint16_t port, Steady::duration timeout) {
    start_ = Steady::now();
    auto self = shared_from_this();
    timer_.expires_after(timeout);
    timer_.async_wait([self](boost::system::error_code ec) {
      if (!ec) self->Finish(FetchResult::kTimeout);
    });
    socket_.async_connect(Loopback(port), [self](boost::system::error_code ec) {
      if (ec) return self->Finish(FetchResult::kError);
      asio::async_write(self->socket_, asio::buffer(self->request_),
                        [self](boost::system::error_code wec, size_t) {
                          if (wec) return self->Finish(FetchResult::kError);
                          self->Read();
                        });
    });
  }

  void Read() {
    auto self = shared_from_this();
    socket_.async_read_some(asio::buffer(buf_), [self](boost::system::error_code ec, size_t n) {
      if (n > 0 && !self->Consume(std::string_view(self->buf_.data(), n))) {
        return self->Finish(FetchResult::kError);
      }
      if (self->Complete()) return self->Finish(FetchResult::kOk);
      // A body without length or chunking ends at EOF.
      if (ec == asio::error::eof && self->head_len_ > 0 && !self->head_.chunked &&
          self->head_.content_length < 0) {
        return self->Finish(FetchResult::kOk);
      }
      if (ec) return self->Finish(FetchResult::kError);
      self->Read();
    });
  }

  bool Consume(std::string_view data) {
    if (head_len_ > 0) return Body(data);
    raw_.append(data);
    head_len_ = ParseHead(raw_, &head_);
    if (head_len_ < 0) return false;
    if (head_len_ == 0) return true;
    return Body(std::string_view(raw_).substr(static_cast<size_t>(head_len_)));
  }
  bool Body(std::string_view data) {
    if (head_.chunked) return chunks_.Feed(data, &body_);
    body_.append(data);
    return true;
  }
  bool Complete() const {
    if (head_len_ <= 0) return false;
    if (head_.chunked) return chunks_.done();
    return head_.content_length >= 0 && body_.size() >= static_cast<size_t>(head_.content_length);
  }

  void Finish(FetchResult::Kind kind) {
    if (finished_) return;
    finished_ = true;
    boost::system::error_code ignored;
    timer_.cancel();
    socket_.close(ignored);
    FetchResult r;
    r.kind = kind;
    r.ms = MsSince(start_);
    if (kind == FetchResult::kOk) {
      r.status = head_.status;
      r.body = std::move(body_);
    }
    done_(r);
  }

  tcp::socket socket_;
  asio::steady_timer timer_;
  std::string request_;
  Done done_;
  Steady::time_point start_;
  std::array<char, 8192> buf_;
  std::string raw_, body_;
  ResponseHead head_;
  long head_len_ = 0;
  ChunkedDecoder chunks_;
  bool finished_ = false;
};

// One Fetch, waited for from another thread (the bench's sequential probes).
inline FetchResult FetchSync(asio::io_context& io, uint16_t port, std::string request,
                             Steady::duration timeout) {
  auto done = std::make_shared<std::promise<FetchResult>>();
  auto future = done->get_future();
  asio::post(io, [&io, port, request = std::move(request), timeout, done]() mutable {
    Fetch::Start(io, port, std::move(request), timeout,
                 [done](const FetchResult& r) { done->set_value(r); });
  });
  return future.get();  // the Fetch's own timer guarantees an answer
}

// Delta delays in 0.1 ms buckets up to 30 s (the server's `at` is whole ms,
// the client clock µs); fixed size, so 10,000 clients cost no allocation.
class LatencyHistogram {
 public:
  void Add(double ms) {
    if (ms < 0) ms = 0;
    size_t b = static_cast<size_t>(ms * 10.0);
    ++buckets_[b < kBuckets ? b : kBuckets];
    ++count_;
    if (ms > max_) max_ = ms;
  }
  int64_t count() const { return count_; }
  double max() const { return max_; }
  // The upper edge of the bucket holding the p-quantile (p in [0,1]).
  double Percentile(double p) const {
    if (count_ == 0) return 0;
    int64_t rank = static_cast<int64_t>(p * static_cast<double>(count_ - 1)) + 1, seen = 0;
    for (size_t b = 0; b <= kBuckets; ++b) {
      seen += buckets_[b];
      if (seen >= rank) return b == kBuckets ? max_ : static_cast<double>(b + 1) / 10.0;
    }
    return max_;
  }

 private:
  static constexpr size_t kBuckets = 300000;
  std::vector<int64_t> buckets_ = std::vector<int64_t>(kBuckets + 1, 0);
  int64_t count_ = 0;
  double max_ = 0;
};

struct SseStats {
  std::atomic<int> connected{0};  // got `200` and the whole head
  std::atomic<int> failed{0};     // connect error, non-200, or closed before the head
  std::atomic<int> ended{0};      // closed by the server after the head
  std::atomic<bool> recording{false};
  // Load thread only (read after Barrier):
  LatencyHistogram delay;  // live deltas received while `recording`
  int64_t replayed = 0;    // buffered deltas older than the subscription (not a fan-out delay)
  int64_t gaps = 0;        // `id:` jumps (deltas the client never got)
  int64_t truncated = 0;   // `event: truncated` frames
};

class SseClient : public std::enable_shared_from_this<SseClient> {
 public:
  SseClient(asio::io_context& io, uint16_t port, const std::string& job_id,
            const std::string& token, SseStats* stats)
      : socket_(io), port_(port), stats_(stats) {
    request_ = "GET /api/local/jobs/" + job_id +
               "/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
               "Authorization: Bearer " +
               token + "\r\n\r\n";
  }

  void Start() {
    auto self = shared_from_this();
    socket_.async_connect(Loopback(port_), [self](boost::system::error_code ec) {
      if (ec) return self->Fail();
      asio::async_write(self->socket_, asio::buffer(self->request_),
                        [self](boost::system::error_code wec, size_t) {
                          if (wec) return self->Fail();
                          self->Read();
                        });
    });
  }
  void Close() {
    closed_ = true;
    boost::system::error_code ignored;
    socket_.close(ignored);
  }

 private:
  void Read() {
    auto self = shared_from_this();
    socket_.async_read_some(asio::buffer(buf_), [self](boost::system::error_code ec, size_t n) {
      if (n > 0) self->Consume(std::string_view(self->buf_.data(), n));
      if (self->closed_) return;
      if (ec) return self->head_len_ > 0 ? self->End() : self->Fail();
      self->Read();
    });
  }
  void Fail() {
    if (closed_) return;
    ++stats_->failed;
    Close();
  }
  void End() {
    ++stats_->ended;
    Close();
  }

  void Consume(std::string_view data) {
    if (head_len_ > 0) return Body(data);
    raw_.append(data);
    head_len_ = ParseHead(raw_, &head_);
    if (head_len_ == 0) return;
    if (head_len_ < 0 || head_.status != 200) return Fail();
    subscribed_ms_ = WallMs();
    ++stats_->connected;
    std::string rest = raw_.substr(static_cast<size_t>(head_len_));
    raw_.clear();
    raw_.shrink_to_fit();
    Body(rest);
  }
  void Body(std::string_view data) {
    if (!head_.chunked) return Events(data);
    decoded_.clear();
    if (!chunks_.Feed(data, &decoded_)) return Fail();
    Events(decoded_);
  }
  void Events(std::string_view data) {
    sse_.Feed(data, [this](const SseEvent& e) { OnEvent(e); });
  }

  void OnEvent(const SseEvent& e) {
    if (e.event == "truncated") ++stats_->truncated;
    if (e.event != "delta") return;
    int64_t id = 0;
    std::from_chars(e.id.data(), e.id.data() + e.id.size(), id);
    if (last_id_ > 0 && id != last_id_ + 1) ++stats_->gaps;
    last_id_ = id;
    auto at = JsonInt(e.data, R"("at":)");
    if (!at) return;
    // A new subscriber first gets the job's buffered deltas: those say how old
    // the buffer is, not how fast the server fans out, so they are not counted.
    if (static_cast<double>(*at) < subscribed_ms_ - 1.0) {
      ++stats_->replayed;
      return;
    }
    if (stats_->recording.load(std::memory_order_relaxed)) {
      stats_->delay.Add(WallMs() - static_cast<double>(*at));
    }
  }

  tcp::socket socket_;
  uint16_t port_;
  SseStats* stats_;
  std::string request_;
  std::array<char, 2048> buf_;
  std::string raw_, decoded_;
  ResponseHead head_;
  long head_len_ = 0;
  ChunkedDecoder chunks_;
  SseParser sse_;
  double subscribed_ms_ = 0;
  int64_t last_id_ = 0;
  bool closed_ = false;
};

struct SlowStats {
  std::atomic<int> connected{0};  // the first part of the head was written
  std::atomic<int> closed{0};     // the server closed (or reset) the connection
  std::atomic<int> answered{0};   // the server sent bytes (e.g. 408) before closing
  std::atomic<int> failed{0};     // could not connect / write the first part
  std::vector<double> close_s;    // load thread only: seconds from connect to the close
};

class SlowClient : public std::enable_shared_from_this<SlowClient> {
 public:
  SlowClient(asio::io_context& io, uint16_t port, SlowStats* stats)
      : socket_(io), timer_(io), port_(port), stats_(stats) {}

  void Start() {
    auto self = shared_from_this();
    socket_.async_connect(Loopback(port_), [self](boost::system::error_code ec) {
      if (ec) return self->Fail();
      static const std::string kStart = "GET /api/health HTTP/1.1\r\nHost: x\r\n";
      asio::async_write(self->socket_, asio::buffer(kStart),
                        [self](boost::system::error_code wec, size_t) {
                          if (wec) return self->Fail();
                          self->connected_at_ = Steady::now();
                          ++self->stats_->connected;
                          self->Read();
                          self->Tick();
                        });
    });
  }
  void Close() {
    closed_ = true;
    boost::system::error_code ignored;
    timer_.cancel();
    socket_.close(ignored);
  }

 private:
  // One more byte of an endless header line, every second.
  void Tick() {
    auto self = shared_from_this();
    timer_.expires_after(std::chrono::seconds(1));
    timer_.async_wait([self](boost::system::error_code ec) {
      if (ec || self->closed_) return;
      static const std::string kLine = "X-Slowloris: ";
      self->byte_ = self->sent_ < kLine.size() ? kLine[self->sent_] : 'a';
      ++self->sent_;
      asio::async_write(self->socket_, asio::buffer(&self->byte_, 1),
                        [self](boost::system::error_code, size_t) { self->Tick(); });
    });
  }
  void Read() {
    auto self = shared_from_this();
    socket_.async_read_some(asio::buffer(buf_), [self](boost::system::error_code ec, size_t n) {
      if (self->closed_) return;
      if (n > 0 && !self->answered_) {
        self->answered_ = true;
        ++self->stats_->answered;
      }
      if (!ec) return self->Read();
      ++self->stats_->closed;
      self->stats_->close_s.push_back(MsSince(self->connected_at_) / 1000.0);
      self->Close();
    });
  }
  void Fail() {
    if (closed_) return;
    ++stats_->failed;
    Close();
  }

  tcp::socket socket_;
  asio::steady_timer timer_;
  uint16_t port_;
  SlowStats* stats_;
  Steady::time_point connected_at_;
  std::array<char, 512> buf_;
  char byte_ = 0;
  size_t sent_ = 0;
  bool answered_ = false, closed_ = false;
};

struct IdleStats {
  std::atomic<int> connected{0};
  std::atomic<int> failed{0};        // connect error
  std::atomic<int> got_503{0};       // answered 503
  std::atomic<int> retry_after{0};   // ... with a Retry-After header
  std::atomic<int> other_answer{0};  // answered something else (e.g. 408)
  std::atomic<int> closed{0};        // closed by the server (with or without an answer)
};

class IdleClient : public std::enable_shared_from_this<IdleClient> {
 public:
  IdleClient(asio::io_context& io, uint16_t port, IdleStats* stats)
      : socket_(io), port_(port), stats_(stats) {}

  void Start() {
    auto self = shared_from_this();
    socket_.async_connect(Loopback(port_), [self](boost::system::error_code ec) {
      if (ec) {
        if (!self->closed_) ++self->stats_->failed;
        return;
      }
      ++self->stats_->connected;
      self->Read();
    });
  }
  void Close() {
    closed_ = true;
    boost::system::error_code ignored;
    socket_.close(ignored);
  }

 private:
  void Read() {
    auto self = shared_from_this();
    socket_.async_read_some(asio::buffer(buf_), [self](boost::system::error_code ec, size_t n) {
      if (self->closed_) return;
      if (n > 0 && !self->classified_) self->Classify(std::string_view(self->buf_.data(), n));
      if (!ec) return self->Read();
      ++self->stats_->closed;
      self->Close();
    });
  }
  void Classify(std::string_view data) {
    raw_.append(data);
    ResponseHead head;
    long len = ParseHead(raw_, &head);
    if (len == 0) return;
    classified_ = true;
    if (len > 0 && head.status == 503) {
      ++stats_->got_503;
      if (!head.retry_after.empty()) ++stats_->retry_after;
    } else {
      ++stats_->other_answer;
    }
  }

  tcp::socket socket_;
  uint16_t port_;
  IdleStats* stats_;
  std::array<char, 1024> buf_;
  std::string raw_;
  bool classified_ = false, closed_ = false;
};

}  // namespace edge
