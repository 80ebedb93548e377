#include "core/http_client.h"

#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

#include "core/mutex.h"
#include "core/strings.h"

namespace maestro {
namespace {

using SteadyClock = std::chrono::steady_clock;

std::once_flag g_curl_init;

int64_t MsSince(SteadyClock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - t).count();
}

char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
char AsciiUpper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return AsciiLower(x) == AsciiLower(y);
         });
}

// The state of one call; curl's callbacks get a pointer to it.
struct Transfer {
  explicit Transfer(const HttpClientOptions& o) : options(o) {}

  const HttpClientOptions& options;
  const HttpHeadFn* on_head = nullptr;
  const HttpChunkFn* on_chunk = nullptr;   // null: buffer into reply.body
  const HttpBodySource* source = nullptr;  // the body pulled while sending, or null
  Status source_error;                     // what source->read failed with
  CURL* easy = nullptr;
  HttpReply reply;
  bool head_done = false;  // the final response's headers are in
  bool stopped = false;    // a callback asked to stop
  bool too_big = false;
  bool connected = false;             // the request is about to go out (idle timing starts)
  const IpAddress* pinned = nullptr;  // egress: the only address to connect to
  std::string unpinned;               // an address curl tried instead (refused)
  SteadyClock::time_point last_activity = SteadyClock::now();
  curl_off_t last_down = 0, last_up = 0;

  static size_t HeaderCb(char* buf, size_t size, size_t n, void* self);
  static size_t WriteCb(char* buf, size_t size, size_t n, void* self);
  static int ProgressCb(void* self, curl_off_t, curl_off_t down, curl_off_t, curl_off_t up);
  static int PrereqCb(void* self, char*, char*, int, int);
  static size_t ReadCb(char* buf, size_t size, size_t n, void* self);
  static int SeekCb(void* self, curl_off_t offset, int origin);
  static curl_socket_t OpenSocketCb(void* self, curlsocktype purpose, curl_sockaddr* address);
};

// The address curl is about to connect to, as an IpAddress (nullopt-like
// false for a family other than IPv4/IPv6).
bool AddressOf(const curl_sockaddr& a, IpAddress* out) {
  if (a.family == AF_INET && a.addrlen >= sizeof(sockaddr_in)) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&a.addr);
    out->v6 = false;
    out->bytes = {};
    std::memcpy(out->bytes.data(), &sin->sin_addr, 4);
    return true;
  }
  if (a.family == AF_INET6 && a.addrlen >= sizeof(sockaddr_in6)) {
    const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&a.addr);
    out->v6 = true;
    std::memcpy(out->bytes.data(), &sin6->sin6_addr, 16);
    return true;
  }
  return false;
}

// With an egress policy, the last guard: whatever curl resolved or was
// told, a socket opens only toward the address the policy checked.
curl_socket_t Transfer::OpenSocketCb(void* self, curlsocktype, curl_sockaddr* address) {
  auto* t = static_cast<Transfer*>(self);
  if (t->pinned) {
    IpAddress a;
    if (!AddressOf(*address, &a) || !(a == *t->pinned)) {
      t->unpinned = AddressOf(*address, &a) ? a.ToString() : "a non-IP address";
      return CURL_SOCKET_BAD;
    }
  }
  return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

size_t Transfer::HeaderCb(char* buf, size_t size, size_t n, void* self) {
  auto* t = static_cast<Transfer*>(self);
  const size_t len = size * n;
  std::string_view line(buf, len);
  t->last_activity = SteadyClock::now();
  if (t->head_done) return len;     // trailers
  if (line.starts_with("HTTP/")) {  // a new response (after 100-continue)
    t->reply.headers.clear();
    return len;
  }
  if (Trim(line, kHttpSpace).empty()) {  // end of this response's headers
    long code = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &code);
    if (code < 200) return len;  // an interim 1xx; the final response follows
    t->reply.status = static_cast<int>(code);
    t->head_done = true;
    if (t->on_head && *t->on_head && !(*t->on_head)(t->reply)) {
      t->stopped = true;
      return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
    }
    return len;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return len;
  t->reply.headers.emplace_back(std::string(Trim(line.substr(0, colon), kHttpSpace)),
                                std::string(Trim(line.substr(colon + 1), kHttpSpace)));
  return len;
}

size_t Transfer::WriteCb(char* buf, size_t size, size_t n, void* self) {
  auto* t = static_cast<Transfer*>(self);
  const size_t len = size * n;
  t->last_activity = SteadyClock::now();
  if (t->on_chunk && *t->on_chunk) {
    if (!(*t->on_chunk)(std::string_view(buf, len))) {
      t->stopped = true;
      return 0;
    }
    return len;
  }
  if (t->reply.body.size() + len > t->options.max_body_bytes) {
    t->too_big = true;
    return 0;
  }
  t->reply.body.append(buf, len);
  return len;
}

int Transfer::ProgressCb(void* self, curl_off_t, curl_off_t down, curl_off_t, curl_off_t up) {
  auto* t = static_cast<Transfer*>(self);
  if (down != t->last_down || up != t->last_up) {
    t->last_down = down;
    t->last_up = up;
    t->last_activity = SteadyClock::now();
  }
  return 0;
}

int Transfer::PrereqCb(void* self, char*, char*, int, int) {
  auto* t = static_cast<Transfer*>(self);
  t->connected = true;
  t->last_activity = SteadyClock::now();
  return CURL_PREREQFUNC_OK;
}

// Pulls the next piece of an HttpBodySource; its error aborts the transfer.
size_t Transfer::ReadCb(char* buf, size_t size, size_t n, void* self) {
  auto* t = static_cast<Transfer*>(self);
  t->last_activity = SteadyClock::now();
  Result<size_t> got = t->source->read(buf, size * n);
  if (!got.ok()) {
    t->source_error = got.status();
    return CURL_READFUNC_ABORT;
  }
  return std::min(*got, size * n);
}

// curl rewinds the body to resend it when a reused connection turns out
// closed by the server; only a rewind to the start is ever asked for.
int Transfer::SeekCb(void* self, curl_off_t offset, int origin) {
  auto* t = static_cast<Transfer*>(self);
  if (offset != 0 || origin != SEEK_SET || !t->source->rewind) return CURL_SEEKFUNC_CANTSEEK;
  Status st = t->source->rewind();
  if (!st.ok()) {
    t->source_error = std::move(st);
    return CURL_SEEKFUNC_FAIL;
  }
  return CURL_SEEKFUNC_OK;
}

}  // namespace

// The multi/easy pairs of finished calls. The multi handle's connection cache
// holds the kept-alive connection; the easy handle is reset, not re-created
// (its buffers stay allocated).
struct HttpKeptHandles {
  static constexpr size_t kMaxIdle = 8;  // more threads at once each make their own pair

  Mutex mu;
  std::vector<std::pair<CURLM*, CURL*>> idle GUARDED_BY(mu);

  ~HttpKeptHandles() {
    MutexLock lock(&mu);
    for (auto [multi, easy] : idle) {
      curl_easy_cleanup(easy);
      curl_multi_cleanup(multi);
    }
  }
  // A kept pair, or false when none is free.
  bool Take(CURLM** multi, CURL** easy) EXCLUDES(mu) {
    MutexLock lock(&mu);
    if (idle.empty()) return false;
    std::tie(*multi, *easy) = idle.back();
    idle.pop_back();
    return true;
  }
  // Keeps a pair whose easy handle is reset and out of its multi; false when
  // full (the caller frees it).
  bool Give(CURLM* multi, CURL* easy) EXCLUDES(mu) {
    MutexLock lock(&mu);
    if (idle.size() >= kMaxIdle) return false;
    idle.emplace_back(multi, easy);
    return true;
  }
};

namespace {

// The handles of one call, fresh or kept; frees or keeps them whatever way
// the call ends. An unfinished transfer's connection is closed when its easy
// handle leaves the multi, so only a whole exchange's connection is reused.
struct Handles {
  explicit Handles(HttpKeptHandles* kept) : kept(kept) {
    if (!kept || !kept->Take(&multi, &easy)) {
      multi = curl_multi_init();
      easy = curl_easy_init();
    }
  }
  ~Handles() {
    if (multi && easy) curl_multi_remove_handle(multi, easy);
    curl_slist_free_all(headers);
    curl_slist_free_all(connect_to);
    if (kept && multi && easy) {
      curl_easy_reset(easy);  // no option points into this call any more
      if (kept->Give(multi, easy)) return;
    }
    if (easy) curl_easy_cleanup(easy);
    if (multi) curl_multi_cleanup(multi);
  }
  Handles(const Handles&) = delete;
  Handles& operator=(const Handles&) = delete;

  HttpKeptHandles* kept;
  CURLM* multi = nullptr;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  curl_slist* connect_to = nullptr;
};

HttpOutcome Failed(Status st) {
  HttpOutcome out;
  out.end = HttpEnd::kFailed;
  out.transport_error = st.message();
  out.status = std::move(st);
  return out;
}

// The one libcurl driver: every HttpClient call of every form runs here.
HttpOutcome Perform(const HttpClientOptions& options, HttpKeptHandles* kept, const HttpCall& call) {
  std::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  const std::string& url = call.url;
  // On someone's behalf: refused before any connection, or pinned below.
  std::optional<EgressTarget> target;
  if (options.egress) {
    auto checked = options.egress->Check(url);
    if (!checked.ok()) {
      return Failed(Status(checked.status().code(),
                           RedactUrl(url) + ": " + checked.status().message(), "url"));
    }
    target = std::move(checked).value();
  }
  Handles h(options.egress ? nullptr : kept);  // a pinned connection is never kept
  if (!h.easy || !h.multi) return Failed(Internal("curl initialisation failed"));
  Transfer t(options);
  t.on_head = &call.on_head;
  t.on_chunk = &call.on_chunk;
  t.source = call.body_source;
  t.easy = h.easy;
  const std::string_view body = call.body;

  std::string verb(call.method);
  std::transform(verb.begin(), verb.end(), verb.begin(), AsciiUpper);
  bool has_expect = false;
  for (const auto& [name, value] : call.headers) {
    has_expect = has_expect || EqualsIgnoreCase(name, "Expect");
    // "Name;" is curl's way to send a header with an empty value.
    std::string line = value.empty() ? name + ";" : name + ": " + value;
    h.headers = curl_slist_append(h.headers, line.c_str());
  }
  if (!has_expect) h.headers = curl_slist_append(h.headers, "Expect:");  // no 100-continue wait

  char errbuf[CURL_ERROR_SIZE] = {0};
  CURL* e = h.easy;
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
  if (verb == "GET") {
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
  } else if (verb == "HEAD") {
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  } else {
    if (verb != "POST") curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, verb.c_str());
    if (t.source) {
      // POST with a body pulled through ReadCb; a known size, so no chunked upload.
      curl_easy_setopt(e, CURLOPT_POST, 1L);
      curl_easy_setopt(e, CURLOPT_READFUNCTION, &Transfer::ReadCb);
      curl_easy_setopt(e, CURLOPT_READDATA, &t);
      curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, &Transfer::SeekCb);
      curl_easy_setopt(e, CURLOPT_SEEKDATA, &t);
      curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(t.source->size));
      curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, 64L * 1024);
    } else if (!body.empty() || verb == "POST" || verb == "PUT" || verb == "PATCH") {
      // POSTFIELDS must never be null (curl would read the body from stdin).
      curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
      curl_easy_setopt(e, CURLOPT_POSTFIELDS, body.empty() ? "" : body.data());
    }
  }
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, h.headers);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Transfer::HeaderCb);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Transfer::WriteCb);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, &Transfer::ProgressCb);
  curl_easy_setopt(e, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, &Transfer::PrereqCb);
  curl_easy_setopt(e, CURLOPT_PREREQDATA, &t);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  // No environment proxy on someone's behalf (it would bypass the pinning).
  if (!options.env_proxy || target) curl_easy_setopt(e, CURLOPT_PROXY, "");
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);  // a redirect is the caller's to read
  if (target) {
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, &Transfer::OpenSocketCb);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, &t);
    // "::ADDR:PORT": any host and port of this transfer connects to the
    // checked numeric address, which curl does not look up again; TLS and
    // the Host header keep the URL's name.
    t.pinned = &target->address;
    const std::string pin = "::" + target->AddressLiteral() + ":" + std::to_string(target->port);
    h.connect_to = curl_slist_append(h.connect_to, pin.c_str());
    curl_easy_setopt(e, CURLOPT_CONNECT_TO, h.connect_to);
  }
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
  if (options.connect_timeout_ms > 0) {
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.connect_timeout_ms));
  }
  if (options.total_timeout_ms > 0) {
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(options.total_timeout_ms));
  }
  curl_multi_add_handle(h.multi, e);

  // The multi interface only so that the idle timeout and should_stop are
  // exact to poll_ms; curl itself enforces the connect and total timeouts.
  const int64_t poll_ms = std::clamp<int64_t>(options.poll_ms, 1, 1000);
  bool idle_expired = false;
  CURLMcode mc = CURLM_OK;
  for (int running = 1;;) {
    mc = curl_multi_perform(h.multi, &running);
    if (mc != CURLM_OK || running == 0) break;
    if (call.should_stop && call.should_stop()) {
      t.stopped = true;
      break;
    }
    int wait_ms = static_cast<int>(poll_ms);
    if (options.idle_timeout_ms > 0 && t.connected) {
      int64_t left = options.idle_timeout_ms - MsSince(t.last_activity);
      if (left <= 0) {
        idle_expired = true;
        break;
      }
      wait_ms = static_cast<int>(std::clamp<int64_t>(left, 1, poll_ms));
    }
    mc = curl_multi_poll(h.multi, nullptr, 0, wait_ms, nullptr);
    if (mc != CURLM_OK) break;
  }
  CURLcode rc = CURLE_OK;
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(h.multi, &left)) {
    if (msg->msg == CURLMSG_DONE) rc = msg->data.result;
  }

  if (!t.head_done) {  // the status line may be in, the headers not all
    long code = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
    if (code >= 200) t.reply.status = static_cast<int>(code);
  }

  HttpOutcome out;
  const std::string where = RedactUrl(url);
  const std::string why =
      errbuf[0] ? std::string(Trim(errbuf, kHttpSpace)) : curl_easy_strerror(rc);
  auto fail = [&](HttpEnd end, Status st) {
    out.end = end;
    out.status = std::move(st);
    out.reply = std::move(t.reply);
    if (out.transport_error.empty()) {
      out.transport_error = rc != CURLE_OK ? curl_easy_strerror(rc) : out.status.message();
    }
    return std::move(out);
  };
  if (t.stopped) {
    out.end = HttpEnd::kStopped;
    out.reply = std::move(t.reply);
    out.reply.stopped = true;
    return out;
  }
  if (idle_expired) {
    out.transport_error = "no data for " + std::to_string(options.idle_timeout_ms) + " ms";
    return fail(HttpEnd::kIdleTimeout,
                Status(StatusCode::kDeadlineExceeded,
                       "timed out talking to " + where + ": " + out.transport_error));
  }
  if (mc != CURLM_OK) {
    return fail(HttpEnd::kFailed, Internal(std::string("curl: ") + curl_multi_strerror(mc)));
  }
  if (!t.unpinned.empty()) {
    return fail(HttpEnd::kFailed,
                InvalidArgument("refused by the egress policy: " + where + " would connect to " +
                                    t.unpinned + ", not the checked " + target->address.ToString(),
                                "url"));
  }
  if (t.too_big) {
    return fail(HttpEnd::kFailed, Status(StatusCode::kResourceExhausted,
                                         "reply from " + where + " is over " +
                                             std::to_string(options.max_body_bytes) + " bytes"));
  }
  if (!t.source_error.ok()) return fail(HttpEnd::kFailed, t.source_error);
  switch (rc) {
    case CURLE_OK:
      out.end = HttpEnd::kComplete;
      out.reply = std::move(t.reply);
      return out;
    case CURLE_OPERATION_TIMEDOUT: {
      // The total limit, or the connect limit (kFailed: nothing was
      // exchanged): once connected only the total can elapse; before, the
      // smaller one did (curl's connect default is 300 s).
      const int64_t connect_limit =
          options.connect_timeout_ms > 0 ? options.connect_timeout_ms : 300'000;
      const bool total = options.total_timeout_ms > 0 &&
                         (t.connected || options.total_timeout_ms <= connect_limit);
      return fail(
          total ? HttpEnd::kTotalTimeout : HttpEnd::kFailed,
          Status(StatusCode::kDeadlineExceeded, "timed out talking to " + where + ": " + why));
    }
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return fail(HttpEnd::kFailed, InvalidArgument("bad URL " + where + ": " + why));
    default:
      if (!t.head_done)
        return fail(HttpEnd::kFailed, Unavailable("cannot reach " + where + ": " + why));
      return fail(HttpEnd::kFailed, Unavailable("reply from " + where + " cut short: " + why));
  }
}

}  // namespace

std::string HttpReply::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (EqualsIgnoreCase(k, name)) return v;
  }
  return "";
}

HttpClient::HttpClient(HttpClientOptions options)
    : options_(std::move(options)),
      kept_(options_.keep_connections ? std::make_shared<HttpKeptHandles>() : nullptr) {}

HttpOutcome HttpClient::Exchange(const HttpCall& call) const {
  return Perform(options_, kept_.get(), call);
}

Result<HttpReply> HttpClient::Request(std::string_view method, const std::string& url,
                                      const HttpHeaders& headers, std::string_view body) const {
  HttpCall call;
  call.method = std::string(method);
  call.url = url;
  call.headers = headers;
  call.body = body;
  HttpOutcome out = Exchange(call);
  if (!out.status.ok()) return std::move(out.status);
  return std::move(out.reply);
}

Result<HttpReply> HttpClient::Stream(std::string_view method, const std::string& url,
                                     const HttpHeaders& headers, std::string_view body,
                                     const HeadFn& on_head, const ChunkFn& on_chunk,
                                     const StopFn& should_stop) const {
  HttpCall call;
  call.method = std::string(method);
  call.url = url;
  call.headers = headers;
  call.body = body;
  call.on_head = on_head;
  // An empty on_chunk drops the body (Exchange would buffer it).
  call.on_chunk = on_chunk ? on_chunk : [](std::string_view) { return true; };
  call.should_stop = should_stop;
  HttpOutcome out = Exchange(call);
  if (!out.status.ok()) return std::move(out.status);
  return std::move(out.reply);
}

std::string UrlEncode(std::string_view text) {
  std::string out;
  // curl_easy_escape takes an int length; split anything longer.
  for (size_t pos = 0; pos < text.size();) {
    size_t n = std::min<size_t>(text.size() - pos, INT_MAX);
    char* escaped = curl_easy_escape(nullptr, text.data() + pos, static_cast<int>(n));
    if (escaped) {
      out += escaped;
      curl_free(escaped);
    }
    pos += n;
  }
  return out;
}

std::string RedactUrl(const std::string& url) {
  size_t scheme = url.find("://");
  size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  size_t end = url.find_first_of("/?#", start);
  if (end == std::string::npos) end = url.size();
  size_t at = url.rfind('@', end);
  if (at == std::string::npos || at < start) return url;
  return url.substr(0, start) + url.substr(at + 1);
}

}  // namespace maestro
