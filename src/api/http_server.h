// HttpServer: maestro's event-driven HTTP/1.1 server (Boost.Beast + Asio;
// http_server.cc is the only file that includes them).
//
// A few I/O threads multiplex every connection: reading, writing, timers.
// A request's handler runs on a bounded handler pool (it may touch the
// store) and never on an I/O thread, except routes the app marks inline
// (health: no store, answered even when the pool is saturated). A live
// stream costs its connection's buffers and a StreamSource — no thread:
// the source wakes the connection, which pulls frames on the pool and
// writes them.
//
// Defences (HttpServerOptions): a cap on connections (503 + Retry-After
// beyond it), header bytes and field counts (431), body bytes (413), a
// deadline for a request's headers (a slow-header client is closed), for
// its body, for each write (a client that stops reading is closed), an
// idle timeout between keep-alive requests, and a cap on concurrent
// streams per key (429). The connection closing frees its stream at once:
// a read stays armed on every streaming socket to see the client leave.
//
// Stop(): stops accepting, ends every stream with a final `event: shutdown`
// frame, lets in-flight requests finish (up to drain_timeout), then stops.
//
// Thread safety: Bind/Start/Stop from one thread; the app's callbacks run
// on pool or I/O threads concurrently.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "api/http.h"
#include "core/status.h"

namespace maestro::api {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: pick a free port
  int io_threads = 2;
  int handler_threads = 8;
  size_t max_body_bytes = 1 << 20;
  size_t max_header_bytes = 16 << 10;
  size_t max_header_fields = 100;
  std::chrono::milliseconds header_timeout{10'000};  // from the first byte of a request
  std::chrono::milliseconds body_timeout{30'000};
  std::chrono::milliseconds idle_timeout{60'000};  // keep-alive wait for the next request
  std::chrono::milliseconds write_timeout{30'000};
  std::chrono::milliseconds keepalive_interval{15'000};  // SSE comment frames
  std::chrono::milliseconds drain_timeout{5'000};
  size_t max_connections = 10'000;
  size_t max_streams_per_key = 1'000;
};

// What the server serves.
struct HttpApp {
  // Runs on the handler pool (or inline, see below) for every request.
  std::function<HttpResponse(HttpRequest&)> handle;
  // True: `handle` is cheap and touches no store for this request; it is
  // called on the I/O thread.
  std::function<bool(const HttpRequest&)> runs_inline;
  // The most body bytes a request may send, decided from its method and
  // path (no query) before the body is read; unset: max_body_bytes. Lets
  // the upload routes take files without raising every route's limit.
  std::function<size_t(std::string_view method, std::string_view path)> body_limit;
};

struct HttpServerStats {
  size_t connections = 0;
  size_t streams = 0;
};

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, HttpApp app);
  ~HttpServer();

  // Claims the address exclusively (SO_REUSEADDR, no SO_REUSEPORT: a port
  // another socket listens on is refused). Returns the bound port, or
  // kUnavailable "cannot listen on HOST:PORT: <reason>". Idempotent.
  Result<int> Bind();
  // Binds unless done and starts the I/O threads and the pool.
  Result<int> Start();
  void Stop();
  HttpServerStats stats() const;

  class Impl;  // http_server.cc

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace maestro::api
