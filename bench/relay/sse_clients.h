// The SSE clients of bench/relay: one Boost.Asio connection per job stream
// (GET /api/local/jobs/:id/stream on `maestro serve`), all on one io_context
// thread, with edge_bench's hand-written HTTP/SSE parsing (bench/api/
// edge_http.h). Each delta's delay is read twice: against the publisher's
// `ns` (CLOCK_REALTIME ns, the figure printed) and against `at` (whole ms,
// what the product stamps). Each client checks its job's deltas arrive
// complete and in order: `n` counts 0, 1, 2, … and the SSE ids grow by one.
//
// Threading: a client is only touched on its io_context's thread; the main
// thread reads the atomics while it runs and the rest after the thread ends.
#pragma once

#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <charconv>
#include <memory>
#include <string>
#include <vector>

#include "edge_http.h"
#include "publisher.h"

namespace maestro::bench {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct SseTotals {
  std::atomic<int> connected{0};  // got `200` and the whole head
  std::atomic<int> failed{0};     // connect error, non-200, or closed before the head
  std::atomic<int> ended{0};      // `event: end` (the job finished)
  // The io thread only (read after it ended):
  std::vector<double> delay_ms;     // receive − ns
  std::vector<double> delay_at_ms;  // receive − at
};

class SseClient : public std::enable_shared_from_this<SseClient> {
 public:
  SseClient(asio::io_context& io, uint16_t port, std::string job_id, const std::string& token,
            SseTotals* totals)
      : socket_(io), port_(port), job_id_(std::move(job_id)), totals_(totals) {
    request_ = "GET /api/local/jobs/" + job_id_ +
               "/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
               "Authorization: Bearer " +
               token + "\r\n\r\n";
  }

  void Start() {
    auto self = shared_from_this();
    socket_.async_connect(tcp::endpoint(asio::ip::address_v4::loopback(), port_),
                          [self](boost::system::error_code ec) {
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

  const std::string& job_id() const { return job_id_; }
  int64_t received() const { return received_; }
  bool in_order() const { return in_order_; }
  bool ended() const { return ended_; }
  int64_t truncated() const { return truncated_; }

 private:
  void Read() {
    auto self = shared_from_this();
    socket_.async_read_some(asio::buffer(buf_), [self](boost::system::error_code ec, size_t n) {
      if (n > 0) self->Consume(std::string_view(self->buf_.data(), n));
      if (self->closed_) return;
      if (ec) return self->head_len_ > 0 ? self->Close() : self->Fail();
      self->Read();
    });
  }
  void Fail() {
    if (closed_) return;
    ++totals_->failed;
    Close();
  }
  void Consume(std::string_view data) {
    if (head_len_ > 0) return Body(data);
    raw_.append(data);
    head_len_ = edge::ParseHead(raw_, &head_);
    if (head_len_ == 0) return;
    if (head_len_ < 0 || head_.status != 200) return Fail();
    ++totals_->connected;
    std::string rest = raw_.substr(static_cast<size_t>(head_len_));
    raw_.clear();
    Body(rest);
  }
  void Body(std::string_view data) {
    if (!head_.chunked) return Events(data);
    decoded_.clear();
    if (!chunks_.Feed(data, &decoded_)) return Fail();
    Events(decoded_);
  }
  void Events(std::string_view data) {
    sse_.Feed(data, [this](const edge::SseEvent& e) { OnEvent(e); });
  }
  void OnEvent(const edge::SseEvent& e) {
    if (e.event == "truncated") ++truncated_;
    if (e.event == "end") {
      ended_ = true;
      ++totals_->ended;
      Close();
      return;
    }
    if (e.event != "delta") return;
    const int64_t now = RealtimeNs();
    uint64_t id = 0;
    std::from_chars(e.id.data(), e.id.data() + e.id.size(), id);
    auto n = edge::JsonInt(e.data, R"("n":)");
    auto ns = edge::JsonInt(e.data, R"("ns":)");
    auto at = edge::JsonInt(e.data, R"("at":)");
    if (!n || !ns || !at) return;
    if (*n != received_ || (last_id_ != 0 && id != last_id_ + 1)) in_order_ = false;
    last_id_ = id;
    ++received_;
    totals_->delay_ms.push_back(static_cast<double>(now - *ns) / 1e6);
    totals_->delay_at_ms.push_back(static_cast<double>(now) / 1e6 - static_cast<double>(*at));
  }

  tcp::socket socket_;
  uint16_t port_;
  std::string job_id_;
  SseTotals* totals_;
  std::string request_;
  std::array<char, 4096> buf_{};
  std::string raw_, decoded_;
  edge::ResponseHead head_;
  long head_len_ = 0;
  edge::ChunkedDecoder chunks_;
  edge::SseParser sse_;
  uint64_t last_id_ = 0;
  int64_t received_ = 0;
  int64_t truncated_ = 0;
  bool in_order_ = true;
  bool ended_ = false;
  bool closed_ = false;
};

}  // namespace maestro::bench
