// Router: (method, path) → handler, with typed path captures.
//
// A pattern is a path whose segments are literals or placeholders:
//   {uuid}  36 characters of [0-9a-fA-F-]           (task ids)
//   {id}    26..36 characters of [0-9A-Za-z-]        (job ids: ULID or UUID)
//   {ulid}  26 characters of [0-9A-Z]                (request ids)
//   {rest}  the last segment only: one or more remaining segments, captured
//           as they came (joined with '/', not percent-decoded; the route
//           decodes and validates, e.g. a file path inside a workspace)
// A placeholder may carry a literal suffix in its segment ("{uuid}.json").
// Captures land in HttpRequest::params in pattern order. A path that matches
// no pattern is the caller's 404; the order of Add() does not matter because
// a path matches at most one pattern per method in maestro's table.
//
// The router also counts the requests it routed for /metrics
// (maestro_http_requests_total{method,route,code}): the label is the matched
// PATTERN ("/api/local/tasks/{uuid}"), never the raw path, and anything that
// matched no pattern is route "unmatched" with a method outside the HTTP
// verbs as "OTHER" — so the label set is bounded by the route table.
//
// Thread safety: Add() before serving; Match(), CountRequest() and
// RequestCounts() from any thread after (the counts are guarded by a mutex).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "api/access.h"
#include "api/http.h"
#include "core/mutex.h"

namespace maestro::api {

// What a route needs — Need (api/access.h): kPublic (anyone) or a caller
// with a credential whose scopes and roles grant read, run, decide or admin
// — is stated where the route is registered, so Add() calls are the one
// table of who may call what (ApiServer::Dispatch answers 401 / 403 before
// the handler runs; the routes-by-role test walks Routes()).

class Router {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  void Add(std::string method, std::string_view pattern, Need need, Handler handler);
  // The handler for (method, path) with its captures, or nullptr. When
  // `pattern` is given it receives the matched route's pattern ("" when
  // none matched); `need`, the matched route's need.
  const Handler* Match(std::string_view method, std::string_view path,
                       std::vector<std::string>* params, std::string* pattern = nullptr,
                       Need* need = nullptr) const;
  // Whether a route of `path` under any method needs a token: a request with
  // another method is refused 401 like the route's own, not told 404.
  bool NeedsToken(std::string_view path) const;

  // Every route as registered: (method, pattern, need), in Add() order.
  struct RouteInfo {
    std::string method;
    std::string pattern;
    Need need;
  };
  std::vector<RouteInfo> Routes() const;

  // Whether `value` fits a placeholder ("{uuid}", "{id}", "{ulid}") as a
  // whole path segment; false for an unknown placeholder.
  static bool Fits(std::string_view placeholder, std::string_view value);

  // Label of requests that matched no pattern.
  static constexpr const char* kUnmatched = "unmatched";
  // Counts one answered request. `pattern` must be a pattern given to Add()
  // (or "" / kUnmatched for none); anything else is counted as unmatched.
  void CountRequest(std::string_view method, std::string_view pattern, int status);
  struct RequestCount {
    std::string method;
    std::string route;  // the pattern, or "unmatched"
    int code = 0;
    uint64_t count = 0;
  };
  // Every (method, route, code) counted so far, in label order.
  std::vector<RequestCount> RequestCounts() const;

 private:
  enum class Kind { kLiteral, kUuid, kId, kUlid, kRest };
  struct Segment {
    Kind kind = Kind::kLiteral;
    std::string text;  // the literal, or the placeholder's suffix
  };
  struct Route {
    std::string method;
    std::string pattern;
    std::vector<Segment> segments;
    Need need = Need::kRead;
    Handler handler;
  };
  static bool MatchSegment(const Segment& seg, std::string_view part, std::string* capture);
  // Whether `route` matches `path` (split into `parts`), its captures in
  // *captures; the method is not looked at.
  static bool MatchPath(const Route& route, std::string_view path,
                        const std::vector<std::string_view>& parts,
                        std::vector<std::string>* captures);

  std::vector<Route> routes_;
  mutable Mutex counts_mu_;
  // (method, route, code) → requests.
  std::map<std::tuple<std::string, std::string, int>, uint64_t> counts_ GUARDED_BY(counts_mu_);
};

// Splits "/a/b?x=1&y=%20" into the path and the decoded query pairs
// ('+' is a space in the query, as HTML forms send it).
void SplitTarget(std::string_view target, std::string* path,
                 std::vector<std::pair<std::string, std::string>>* query);

// Percent-decodes a path (no '+' rule: that is the query's). kNotFound-free:
// a malformed escape ("%zz", "%4") stays as it is.
std::string DecodePath(std::string_view path);

}  // namespace maestro::api
