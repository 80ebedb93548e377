// The one file that includes the HTTP library (Boost.Beast on Asio).
//
// Each connection is a Session whose socket lives on its own strand, so its
// handlers never run concurrently and need no lock. A request is read in
// two phases with separate deadlines — its headers, then its body — and
// handed to the pool; the response is posted back to the strand and
// written. A stream response writes its header, arms a read that only
// watches for the client leaving, and then alternates pull (pool) and
// write (strand) whenever its source wakes it or the keep-alive tick fires.
#include "api/http_server.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <map>
#include <optional>
#include <thread>
#include <unordered_map>

#include "api/http_util.h"
#include "api/router.h"
#include "core/mutex.h"

namespace maestro::api {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

class Session;

class HttpServer::Impl {
 public:
  Impl(HttpServerOptions options, HttpApp app);
  Result<int> Bind();
  Result<int> Start();
  void Stop();
  HttpServerStats stats() const { return {connections_.load(), streams_.load()}; }

  const HttpServerOptions& options() const { return opt_; }
  asio::thread_pool& pool() { return *pool_; }
  bool stopping() const { return stopping_.load(); }
  // The app's answer; an exception becomes a 500 with no detail.
  HttpResponse Handle(HttpRequest& req);
  bool RunsInline(const HttpRequest& req) const {
    return app_.runs_inline && app_.runs_inline(req);
  }
  size_t BodyLimit(std::string_view method, std::string_view target) const {
    if (!app_.body_limit) return opt_.max_body_bytes;
    return app_.body_limit(method, target.substr(0, target.find('?')));
  }
  bool AcquireStream(const std::string& key);
  void ReleaseStream(const std::string& key);
  void Forget(Session* s);

 private:
  void Accept();
  void RejectBusy(tcp::socket sock);

  const HttpServerOptions opt_;
  const HttpApp app_;
  // Declared before ioc_: pending handlers own Sessions, whose destructors
  // use these when ioc_ is destroyed.
  mutable Mutex mu_;
  std::map<std::string, size_t> streams_by_key_ GUARDED_BY(mu_);
  std::unordered_map<Session*, std::weak_ptr<Session>> sessions_ GUARDED_BY(mu_);
  std::atomic<bool> stopping_{false};
  std::atomic<size_t> connections_{0};
  std::atomic<size_t> streams_{0};

  asio::io_context ioc_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::unique_ptr<asio::thread_pool> pool_;
  // The acceptor, its retry timer and Stop's close run their handlers on one
  // strand: with several io threads an accept completing while Stop closes the
  // acceptor would otherwise touch it from two threads at once (found by TSan).
  asio::strand<asio::io_context::executor_type> accept_strand_{asio::make_strand(ioc_)};
  tcp::acceptor acceptor_{accept_strand_};
  asio::steady_timer accept_retry_{accept_strand_};
  std::vector<std::thread> threads_;
  std::string busy_reply_;  // the canned 503 for connections over the cap
  bool bound_ = false;
  bool started_ = false;
  int port_ = 0;
};

namespace {

// The body of an SSE frame that ends every stream when the server stops.
constexpr std::string_view kShutdownData = R"({"reason":"server stopping"})";

HttpResponse ServerError(int http_status, StatusCode code, const std::string& message) {
  HttpResponse res = ReplyError(http_status, Status(code, message));
  return res;
}

// A handler's header onto the reply: Set-Cookie is added (a reply may set
// several cookies, e.g. the sign-in's session and CSRF cookies and the
// expired login cookie); any other name replaces the default (Content-Type).
template <class Message>
void SetHeader(Message& msg, const std::string& name, const std::string& value) {
  if (beast::iequals(name, "Set-Cookie")) {
    msg.insert(name, value);
  } else {
    msg.set(name, value);
  }
}

}  // namespace

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(HttpServer::Impl& srv, tcp::socket socket) : srv_(srv), stream_(std::move(socket)) {}
  ~Session() {
    if (has_stream_slot_) srv_.ReleaseStream(stream_key_);
    srv_.Forget(this);
  }

  void Start() { ReadRequest(/*first=*/true); }
  void PostShutdown() {
    asio::post(stream_.get_executor(), [self = shared_from_this()] { self->Shutdown(); });
  }
  // After the I/O threads stopped (nothing runs on the strand any more): a
  // connection the drain could not finish drops its subscriptions, so no
  // publisher wakes into a stopped server.
  void Abandon() { ReleaseSource(); }

 private:
  // Server stop: an idle connection closes, a request in flight is answered
  // with Connection: close, a stream gets its final frame.
  void Shutdown() {
    if (closed_) return;
    stopping_ = true;
    if (source_) {
      if (!ended_) {
        ended_ = true;
        final_frame_ = true;
      }
      if (!writing_ && !pulling_) AfterWrite();
    } else if (reading_) {
      Close();
    }
  }

  const HttpServerOptions& opt() const { return srv_.options(); }

  void ReadRequest(bool first) {
    if (stopping_) return Close();
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(opt().max_header_bytes));
    parser_->body_limit(opt().max_body_bytes);
    reading_ = true;
    if (first || buffer_.size() > 0) return ReadHeader();
    // Between keep-alive requests the client may think for a while (idle
    // timeout); once its next request starts, the header deadline runs.
    stream_.expires_after(opt().idle_timeout);
    stream_.async_read_some(buffer_.prepare(1024),
                            [self = shared_from_this()](error_code ec, size_t n) {
                              if (ec) return self->Close();
                              self->buffer_.commit(n);
                              self->ReadHeader();
                            });
  }

  void ReadHeader() {
    stream_.expires_after(opt().header_timeout);
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](error_code ec, size_t) { self->OnHeader(ec); });
  }

  // Maps a read error to its answer; false when the connection just closes.
  bool AnswerReadError(error_code ec) {
    const bool parse_error =
        &ec.category() == &http::make_error_code(http::error::bad_target).category();
    if (ec == http::error::header_limit) {
      Fail(ServerError(431, StatusCode::kResourceExhausted, "request headers too large"));
    } else if (ec == http::error::body_limit) {
      Fail(ServerError(413, StatusCode::kResourceExhausted, "request body too large"));
    } else if (parse_error && ec != http::error::end_of_stream &&
               ec != http::error::partial_message) {
      Fail(ServerError(400, StatusCode::kInvalidArgument, "malformed HTTP request"));
    } else {
      return false;  // timeout, reset, end of stream: nobody to answer
    }
    return true;
  }

  void OnHeader(error_code ec) {
    if (ec) {
      if (!AnswerReadError(ec)) Close();
      return;
    }
    const auto& msg = parser_->get();
    if (static_cast<size_t>(std::distance(msg.begin(), msg.end())) > opt().max_header_fields) {
      return Fail(ServerError(431, StatusCode::kResourceExhausted, "too many request headers"));
    }
    parser_->body_limit(
        srv_.BodyLimit(std::string_view(msg.method_string().data(), msg.method_string().size()),
                       std::string_view(msg.target().data(), msg.target().size())));
    if (beast::iequals(msg[http::field::expect], "100-continue") && !parser_->is_done()) {
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      stream_.expires_after(opt().write_timeout);
      asio::async_write(stream_, asio::buffer(kContinue.data(), kContinue.size()),
                        [self = shared_from_this()](error_code ec, size_t) {
                          if (ec) return self->Close();
                          self->ReadBody();
                        });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    if (parser_->is_done()) return OnRequest();
    stream_.expires_after(opt().body_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](error_code ec, size_t) {
                       if (ec) {
                         if (!self->AnswerReadError(ec)) self->Close();
                         return;
                       }
                       self->OnRequest();
                     });
  }

  void OnRequest() {
    stream_.expires_never();
    reading_ = false;
    auto& msg = parser_->get();
    HttpRequest req;
    req.method = std::string(msg.method_string());
    SplitTarget(std::string_view(msg.target().data(), msg.target().size()), &req.path, &req.query);
    for (const auto& f : msg) {
      req.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    }
    req.body = std::move(msg.body());
    keep_alive_ = msg.keep_alive();
    version_ = msg.version();
    parser_.reset();
    if (srv_.RunsInline(req)) return Respond(srv_.Handle(req));
    asio::post(srv_.pool(), [self = shared_from_this(), req = std::move(req)]() mutable {
      HttpResponse res = self->srv_.Handle(req);
      asio::post(self->stream_.get_executor(),
                 [self, res = std::move(res)]() mutable { self->Respond(std::move(res)); });
    });
  }

  void Respond(HttpResponse res) {
    if (closed_) return;
    if (res.stream) return StartStream(std::move(res));
    auto msg = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(res.status), version_);
    msg->set(http::field::server, "maestro");
    msg->set(http::field::content_type, res.content_type);
    for (const auto& [k, v] : res.headers) SetHeader(*msg, k, v);
    msg->body() = std::move(res.body);
    msg->keep_alive(keep_alive_ && !stopping_);
    msg->prepare_payload();
    stream_.expires_after(opt().write_timeout);
    http::async_write(stream_, *msg, [self = shared_from_this(), msg](error_code ec, size_t) {
      self->stream_.expires_never();
      if (ec) return self->Close();
      if (self->failed_) return self->LingerAndClose();
      if (!msg->keep_alive()) return self->CloseGracefully();
      self->ReadRequest(/*first=*/false);
    });
  }

  // After an error answer the client may still be sending (a body over the
  // limit): read and drop what comes for a short while before closing, so
  // its writes do not fail with a reset before it reads the answer.
  void LingerAndClose() {
    error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    linger_.resize(16 << 10);
    stream_.expires_after(std::chrono::seconds(5));
    Drain();
  }
  void Drain() {
    stream_.async_read_some(asio::buffer(linger_),
                            [self = shared_from_this()](error_code ec, size_t n) {
                              self->lingered_ += n;
                              if (ec || self->lingered_ > kMaxLingerBytes) return self->Close();
                              self->Drain();
                            });
  }

  // An error found while reading: answered, then the connection closes
  // (the rest of the request cannot be trusted to frame the next one).
  void Fail(HttpResponse res) {
    keep_alive_ = false;
    reading_ = false;
    failed_ = true;
    Respond(std::move(res));
  }

  // --- streams --------------------------------------------------------------

  void StartStream(HttpResponse res) {
    if (!srv_.AcquireStream(res.stream_key)) {
      return Respond(ReplyTooMany(Status(StatusCode::kResourceExhausted,
                                         "too many open streams for this token; close one first"),
                                  5));
    }
    has_stream_slot_ = true;
    stream_key_ = res.stream_key;
    source_ = std::move(res.stream);
    auto head = std::make_shared<http::response<http::empty_body>>(http::status::ok, version_);
    head->set(http::field::server, "maestro");
    head->set(http::field::content_type, "text/event-stream");
    head->set(http::field::cache_control, "no-cache");
    head->set("X-Accel-Buffering", "no");
    for (const auto& [k, v] : res.headers) SetHeader(*head, k, v);
    head->chunked(true);
    // The connection closes when the stream ends (FinishStream), so say so:
    // a keep-alive client would otherwise put the socket back in its pool
    // and may send its next request into the close (seen as undici's
    // "fetch failed" after an A2A tasks/resubscribe stream).
    head->keep_alive(false);
    auto sr = std::make_shared<http::response_serializer<http::empty_body>>(*head);
    stream_.expires_after(opt().write_timeout);
    writing_ = true;  // Shutdown() must not write a frame before the header
    http::async_write_header(
        stream_, *sr, [self = shared_from_this(), head, sr](error_code ec, size_t) {
          self->writing_ = false;
          self->stream_.expires_never();
          if (ec || self->closed_ || !self->source_) return self->Close();
          self->buffer_.shrink_to_fit();  // an idle stream keeps no read buffer
          self->WatchForClose();
          std::weak_ptr<Session> weak = self;
          self->source_->Watch([weak] {
            auto s = weak.lock();
            // Coalesced: one posted wake per connection at a time.
            if (!s || s->wake_posted_.exchange(true)) return;
            asio::post(s->stream_.get_executor(), [s] {
              s->wake_posted_ = false;
              s->woken_ = true;
              s->MaybePull();
            });
          });
          self->keepalive_.emplace(self->stream_.get_executor());
          self->ArmKeepAlive();  // from now on always armed: it also bounds stuck writes
          if (self->ended_) return self->AfterWrite();  // stopped meanwhile: final frame
          self->woken_ = true;
          self->MaybePull();
        });
  }

  // SSE clients send nothing after their request: the socket becomes
  // readable only when the client leaves (or misbehaves) — either way the
  // stream and its subscription end now, not at the next event.
  void WatchForClose() {
    stream_.socket().async_wait(tcp::socket::wait_read,
                                [self = shared_from_this()](error_code) { self->Close(); });
  }

  void MaybePull() {
    if (closed_ || pulling_ || writing_ || ended_ || !source_) return;
    if (!woken_ && !more_) return;
    const bool periodic = periodic_;
    woken_ = more_ = periodic_ = false;
    pulling_ = true;
    last_pull_ = std::chrono::steady_clock::now();
    if (source_->PullsInMemory(periodic)) {
      std::string out;
      const StreamSource::Step step = PullFrom(*source_, periodic, &out);
      return OnPulled(step, std::move(out));
    }
    asio::post(srv_.pool(), [self = shared_from_this(), source = source_, periodic] {
      std::string out;
      const StreamSource::Step step = PullFrom(*source, periodic, &out);
      asio::post(self->stream_.get_executor(), [self, step, out = std::move(out)]() mutable {
        self->OnPulled(step, std::move(out));
      });
    });
  }

  // A source that throws ends its stream; the server goes on.
  static StreamSource::Step PullFrom(StreamSource& source, bool periodic, std::string* out) {
    try {
      return source.Pull(periodic, out);
    } catch (const std::exception& e) {
      spdlog::error("api: stream source failed: {}", e.what());
    }
    return StreamSource::Step::kEnd;
  }

  void OnPulled(StreamSource::Step step, std::string out) {
    pulling_ = false;
    if (closed_) return;
    if (step == StreamSource::Step::kMore) more_ = true;
    if (step == StreamSource::Step::kEnd) ended_ = true;
    if (out.empty()) return AfterWrite();
    WriteChunk(std::move(out));
  }

  // Stream writes carry no per-write deadline (arming one costs a timer
  // update per frame); the stream's own timer closes a write that has been
  // stuck for write_timeout — a client that stopped reading.
  void WriteChunk(std::string data) {
    writing_ = true;
    write_started_ = std::chrono::steady_clock::now();
    chunk_ = std::move(data);
    asio::async_write(stream_, http::make_chunk(asio::buffer(chunk_)),
                      [self = shared_from_this()](error_code ec, size_t) {
                        self->writing_ = false;
                        self->last_write_ = std::chrono::steady_clock::now();
                        if (ec) return self->Close();
                        self->AfterWrite();
                      });
  }

  void AfterWrite() {
    if (closed_) return;
    if (final_frame_) {
      final_frame_ = false;
      return WriteChunk(SseFrame("", "shutdown", kShutdownData));
    }
    if (ended_) return FinishStream();
    ArmKeepAlive();
    MaybePull();
  }

  // One timer per stream, armed once and not reset by every write (a busy
  // stream would otherwise pay a cancel + re-arm per frame). When it fires it
  // sends a keep-alive comment if nothing was written for the keep-alive
  // interval, pulls `periodic` if the source's poll interval passed without
  // a pull, and re-arms for whichever comes next.
  void ArmKeepAlive() {
    if (timer_armed_ || closed_ || !keepalive_ || (ended_ && !writing_)) return;
    using std::chrono::milliseconds;
    const auto now = std::chrono::steady_clock::now();
    auto next = opt().keepalive_interval - (now - last_write_);
    const auto poll = source_ ? source_->poll_interval() : milliseconds(0);
    if (poll.count() > 0) next = std::min(next, poll - (now - last_pull_));
    if (writing_) next = opt().write_timeout - (now - write_started_);
    timer_armed_ = true;
    keepalive_->expires_after(std::max<std::chrono::steady_clock::duration>(next, milliseconds(5)));
    keepalive_->async_wait([self = shared_from_this()](error_code ec) {
      self->timer_armed_ = false;
      if (ec || self->closed_) return;
      const auto now = std::chrono::steady_clock::now();
      if (self->writing_ && now - self->write_started_ >= self->opt().write_timeout) {
        return self->Close();  // the client stopped reading
      }
      if (self->ended_) return;
      if (self->writing_ || self->pulling_) return self->ArmKeepAlive();  // busy: later
      const auto poll = self->source_->poll_interval();
      const bool ping = now - self->last_write_ >= self->opt().keepalive_interval;
      const bool due = poll.count() > 0 && now - self->last_pull_ >= poll;
      if (ping || due) {
        // The tick also re-reads the source: commits of other processes are
        // only seen this way.
        self->periodic_ = self->woken_ = true;
        if (ping) return self->WriteChunk(std::string(kSseKeepAlive));
        return self->MaybePull();
      }
      self->ArmKeepAlive();
    });
  }

  void FinishStream() {
    ReleaseSource();
    writing_ = true;
    stream_.expires_after(opt().write_timeout);
    asio::async_write(stream_, http::make_chunk_last(),
                      [self = shared_from_this()](error_code, size_t) {
                        self->writing_ = false;
                        self->CloseGracefully();
                      });
  }

  void ReleaseSource() {
    source_.reset();  // its destructor ends the subscriptions
    if (keepalive_) keepalive_->cancel();
    if (has_stream_slot_) {
      has_stream_slot_ = false;
      srv_.ReleaseStream(stream_key_);
    }
  }

  void CloseGracefully() {
    error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    Close();
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    ReleaseSource();
    error_code ignored;
    stream_.socket().close(ignored);
  }

  HttpServer::Impl& srv_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_{64 << 10};  // grows as needed, up to the header limit + body
  std::optional<http::request_parser<http::string_body>> parser_;
  unsigned version_ = 11;
  bool keep_alive_ = false;
  bool reading_ = false;
  bool stopping_ = false;
  bool closed_ = false;
  bool failed_ = false;  // answered a bad request: linger, then close
  static constexpr size_t kMaxLingerBytes = 64 << 20;
  std::string linger_;
  size_t lingered_ = 0;

  // Stream state (strand only, except wake_posted_).
  std::shared_ptr<StreamSource> source_;
  std::string stream_key_;
  bool has_stream_slot_ = false;
  std::optional<asio::steady_timer> keepalive_;
  std::string chunk_;  // the chunk being written
  std::chrono::steady_clock::time_point last_write_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_pull_ = last_write_;
  std::chrono::steady_clock::time_point write_started_ = last_write_;
  bool timer_armed_ = false;
  bool pulling_ = false, writing_ = false, woken_ = false, more_ = false;
  bool periodic_ = false, ended_ = false, final_frame_ = false;
  std::atomic<bool> wake_posted_{false};
};

HttpServer::Impl::Impl(HttpServerOptions options, HttpApp app)
    : opt_(std::move(options)), app_(std::move(app)) {
  const std::string body =
      ServerError(503, StatusCode::kUnavailable, "too many connections; retry shortly").body;
  busy_reply_ =
      "HTTP/1.1 503 Service Unavailable\r\nServer: maestro\r\nContent-Type: application/json\r\n"
      "Retry-After: 1\r\nConnection: close\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
}

Result<int> HttpServer::Impl::Bind() {
  if (bound_) return port_;
  const std::string where = opt_.host + ":" + std::to_string(opt_.port);
  error_code ec;
  tcp::resolver resolver(ioc_);
  auto results = resolver.resolve(opt_.host, std::to_string(opt_.port),
                                  tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || results.empty()) {
    return Unavailable("cannot listen on " + where + ": " + (ec ? ec.message() : "no address"));
  }
  const tcp::endpoint ep = results.begin()->endpoint();
  // SO_REUSEADDR allows a restart over TIME_WAIT sockets but refuses a
  // port another socket listens on (no SO_REUSEPORT sharing).
  if (!acceptor_.open(ep.protocol(), ec) &&
      !acceptor_.set_option(asio::socket_base::reuse_address(true), ec) &&
      !acceptor_.bind(ep, ec) && !acceptor_.listen(asio::socket_base::max_listen_connections, ec)) {
    port_ = acceptor_.local_endpoint().port();
    bound_ = true;
    return port_;
  }
  error_code ignored;
  acceptor_.close(ignored);
  return Unavailable("cannot listen on " + where + ": " + ec.message());
}

Result<int> HttpServer::Impl::Start() {
  MAESTRO_ASSIGN_OR_RETURN(int port, Bind());
  if (started_) return port;
  started_ = true;
  // Every connection is a descriptor: use all the process may have.
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < opt_.max_connections + 256) {
    spdlog::warn("http: the open-file limit ({}) is below http.max_connections ({}) + 256",
                 lim.rlim_cur, opt_.max_connections);
  }
  pool_ = std::make_unique<asio::thread_pool>(std::max(1, opt_.handler_threads));
  work_.emplace(ioc_.get_executor());
  Accept();
  for (int i = 0; i < std::max(1, opt_.io_threads); ++i) {
    threads_.emplace_back([this] { ioc_.run(); });
  }
  return port;
}

void HttpServer::Impl::Accept() {
  acceptor_.async_accept(asio::make_strand(ioc_), [this](error_code ec, tcp::socket sock) {
    if (ec) {
      if (!acceptor_.is_open() || stopping_) return;
      // Out of descriptors (or a transient error): back off instead of
      // spinning on a listen queue that cannot be served.
      spdlog::warn("http: accept failed: {}", ec.message());
      accept_retry_.expires_after(std::chrono::milliseconds(50));
      accept_retry_.async_wait([this](error_code e) {
        if (!e) Accept();
      });
      return;
    }
    error_code ignored;
    sock.set_option(tcp::no_delay(true), ignored);  // SSE frames are small
    if (connections_.load() >= opt_.max_connections) {
      RejectBusy(std::move(sock));
    } else {
      auto session = std::make_shared<Session>(*this, std::move(sock));
      {
        MutexLock lock(&mu_);
        sessions_.emplace(session.get(), session);
      }
      connections_.fetch_add(1);
      session->Start();
    }
    Accept();
  });
}

void HttpServer::Impl::RejectBusy(tcp::socket sock) {
  auto s = std::make_shared<tcp::socket>(std::move(sock));
  asio::async_write(*s, asio::buffer(busy_reply_), [s](error_code, size_t) {
    error_code ignored;
    s->shutdown(tcp::socket::shutdown_send, ignored);
    s->close(ignored);
  });
}

void HttpServer::Impl::Forget(Session* s) {
  MutexLock lock(&mu_);
  if (sessions_.erase(s) > 0) connections_.fetch_sub(1);
}

bool HttpServer::Impl::AcquireStream(const std::string& key) {
  MutexLock lock(&mu_);
  size_t& n = streams_by_key_[key];
  if (n >= opt_.max_streams_per_key) return false;
  ++n;
  streams_.fetch_add(1);
  return true;
}

void HttpServer::Impl::ReleaseStream(const std::string& key) {
  MutexLock lock(&mu_);
  auto it = streams_by_key_.find(key);
  if (it == streams_by_key_.end()) return;
  if (--it->second == 0) streams_by_key_.erase(it);
  streams_.fetch_sub(1);
}

HttpResponse HttpServer::Impl::Handle(HttpRequest& req) {
  try {
    return app_.handle(req);
  } catch (const std::exception& e) {
    // Logged with its text; the client learns nothing of it.
    spdlog::error("api: {} {} failed: {}", req.method, req.path, e.what());
  } catch (...) {
    spdlog::error("api: {} {} failed", req.method, req.path);
  }
  return ServerError(500, StatusCode::kInternal, "internal error");
}

void HttpServer::Impl::Stop() {
  if (!started_) {
    error_code ignored;
    acceptor_.close(ignored);
    return;
  }
  if (stopping_.exchange(true)) return;
  asio::post(accept_strand_, [this] {
    error_code ignored;
    acceptor_.close(ignored);
    accept_retry_.cancel();
    std::vector<std::shared_ptr<Session>> live;
    {
      MutexLock lock(&mu_);
      for (auto& [ptr, weak] : sessions_) {
        if (auto s = weak.lock()) live.push_back(std::move(s));
      }
    }
    for (auto& s : live) s->PostShutdown();
  });
  // Drain: in-flight requests finish, streams write their last frame.
  const auto deadline = std::chrono::steady_clock::now() + opt_.drain_timeout;
  while (connections_.load() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (connections_.load() > 0) {
    spdlog::warn("http: {} connection(s) still open after the drain; closing them",
                 connections_.load());
  }
  work_.reset();
  ioc_.stop();
  for (auto& t : threads_) t.join();
  threads_.clear();
  pool_->join();
  std::vector<std::shared_ptr<Session>> left;
  {
    MutexLock lock(&mu_);
    for (auto& [ptr, weak] : sessions_) {
      if (auto s = weak.lock()) left.push_back(std::move(s));
    }
  }
  for (auto& s : left) s->Abandon();
}

HttpServer::HttpServer(HttpServerOptions options, HttpApp app)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(app))) {}
HttpServer::~HttpServer() { Stop(); }
Result<int> HttpServer::Bind() { return impl_->Bind(); }
Result<int> HttpServer::Start() { return impl_->Start(); }
void HttpServer::Stop() { impl_->Stop(); }
HttpServerStats HttpServer::stats() const { return impl_->stats(); }

}  // namespace maestro::api
