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

#include "core/strings.h"

namespace maestro {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr int kPollCapMs = 50;  // longest wait between idle-timeout checks

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
  const HttpClient::HeadFn* on_head = nullptr;
  const HttpClient::ChunkFn* on_chunk = nullptr;  // null: buffer into reply.body
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
  if (t->on_chunk) {
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

// Frees the handles of one call, whatever way it ends.
struct Handles {
  CURL* easy = curl_easy_init();
  CURLM* multi = curl_multi_init();
  curl_slist* headers = nullptr;
  curl_slist* connect_to = nullptr;
  ~Handles() {
    if (multi && easy) curl_multi_remove_handle(multi, easy);
    if (easy) curl_easy_cleanup(easy);
    if (multi) curl_multi_cleanup(multi);
    curl_slist_free_all(headers);
    curl_slist_free_all(connect_to);
  }
};

Result<HttpReply> Perform(const HttpClientOptions& options, std::string_view method,
                          const std::string& url, const HttpHeaders& headers, std::string_view body,
                          const HttpClient::HeadFn* on_head, const HttpClient::ChunkFn* on_chunk,
                          const HttpClient::StopFn* should_stop) {
  std::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  // On someone's behalf: refused before any connection, or pinned below.
  std::optional<EgressTarget> target;
  if (options.egress) {
    auto checked = options.egress->Check(url);
    if (!checked.ok()) {
      return Status(checked.status().code(), RedactUrl(url) + ": " + checked.status().message(),
                    "url");
    }
    target = std::move(checked).value();
  }
  Handles h;
  if (!h.easy || !h.multi) return Internal("curl initialisation failed");
  Transfer t(options);
  t.on_head = on_head;
  t.on_chunk = on_chunk;
  t.easy = h.easy;

  std::string verb(method);
  std::transform(verb.begin(), verb.end(), verb.begin(), AsciiUpper);
  bool has_expect = false;
  for (const auto& [name, value] : headers) {
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
    if (!body.empty() || verb == "POST" || verb == "PUT" || verb == "PATCH") {
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
  curl_easy_setopt(e, CURLOPT_PROXY, "");           // never an environment proxy
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

  // The multi interface only so that the idle timeout is exact to kPollCapMs;
  // curl itself enforces the connect and total timeouts.
  bool idle_expired = false;
  CURLMcode mc = CURLM_OK;
  for (int running = 1;;) {
    mc = curl_multi_perform(h.multi, &running);
    if (mc != CURLM_OK || running == 0) break;
    if (should_stop && *should_stop && (*should_stop)()) {
      t.stopped = true;
      break;
    }
    int wait_ms = kPollCapMs;
    if (options.idle_timeout_ms > 0 && t.connected) {
      int64_t left = options.idle_timeout_ms - MsSince(t.last_activity);
      if (left <= 0) {
        idle_expired = true;
        break;
      }
      wait_ms = static_cast<int>(std::clamp<int64_t>(left, 1, kPollCapMs));
    }
    mc = curl_multi_poll(h.multi, nullptr, 0, wait_ms, nullptr);
    if (mc != CURLM_OK) break;
  }
  CURLcode rc = CURLE_OK;
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(h.multi, &left)) {
    if (msg->msg == CURLMSG_DONE) rc = msg->data.result;
  }

  const std::string where = RedactUrl(url);
  const std::string why =
      errbuf[0] ? std::string(Trim(errbuf, kHttpSpace)) : curl_easy_strerror(rc);
  if (t.stopped) {
    t.reply.stopped = true;
    return std::move(t.reply);
  }
  if (idle_expired) {
    return Status(StatusCode::kDeadlineExceeded,
                  "timed out talking to " + where + ": no data for " +
                      std::to_string(options.idle_timeout_ms) + " ms");
  }
  if (mc != CURLM_OK) return Internal(std::string("curl: ") + curl_multi_strerror(mc));
  if (!t.unpinned.empty()) {
    return InvalidArgument("refused by the egress policy: " + where + " would connect to " +
                               t.unpinned + ", not the checked " + target->address.ToString(),
                           "url");
  }
  if (t.too_big) {
    return Status(
        StatusCode::kResourceExhausted,
        "reply from " + where + " is over " + std::to_string(options.max_body_bytes) + " bytes");
  }
  switch (rc) {
    case CURLE_OK:
      return std::move(t.reply);
    case CURLE_OPERATION_TIMEDOUT:
      return Status(StatusCode::kDeadlineExceeded, "timed out talking to " + where + ": " + why);
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return InvalidArgument("bad URL " + where + ": " + why);
    default:
      if (!t.head_done) return Unavailable("cannot reach " + where + ": " + why);
      return Unavailable("reply from " + where + " cut short: " + why);
  }
}

}  // namespace

std::string HttpReply::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (EqualsIgnoreCase(k, name)) return v;
  }
  return "";
}

HttpClient::HttpClient(HttpClientOptions options) : options_(options) {}

Result<HttpReply> HttpClient::Request(std::string_view method, const std::string& url,
                                      const HttpHeaders& headers, std::string_view body) const {
  return Perform(options_, method, url, headers, body, nullptr, nullptr, nullptr);
}

Result<HttpReply> HttpClient::Stream(std::string_view method, const std::string& url,
                                     const HttpHeaders& headers, std::string_view body,
                                     const HeadFn& on_head, const ChunkFn& on_chunk,
                                     const StopFn& should_stop) const {
  static const ChunkFn kDiscard = [](std::string_view) { return true; };
  return Perform(options_, method, url, headers, body, &on_head, on_chunk ? &on_chunk : &kDiscard,
                 &should_stop);
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
