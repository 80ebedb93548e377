// The web UI routes: the built React app (ui/dist) at `/`, the open
// GET /api/info the UI reads first (demo flag), and the index.html fallback
// for client-side routes such as /tasks/<id>, so a reload of any UI address
// works. API routes are matched first and never shadowed: the fallback
// (ApiServer::Handle) excludes /api/ and /metrics, and unknown /api/ paths
// stay 404 JSON.
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "api/api_server.h"
#include "api/http_util.h"

namespace maestro {
namespace {

constexpr char kNoUiPage[] = R"(<!doctype html><meta charset="utf-8"><title>maestro</title>
<body style="font-family:sans-serif;max-width:40em;margin:3em auto">
<h1>maestro</h1><p>The API is running, but the web UI is not built.</p>
<p>Build it with <code>./scripts/ui.sh</code> (or start the server with
<code>./scripts/serve.sh</code>, which builds it), or point <code>MAESTRO_UI_DIR</code> /
<code>ui.dir</code> at a built <code>ui/dist</code>.</p></body>)";

// The file's bytes, or nullopt when it is missing or not a regular file.
std::optional<std::string> ReadFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string ContentType(const std::string& path) {
  static const std::pair<const char*, const char*> kTypes[] = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".map", "application/json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".jpg", "image/jpeg"},
      {".ico", "image/x-icon"},
      {".webp", "image/webp"},
      {".woff2", "font/woff2"},
      {".woff", "font/woff"},
      {".txt", "text/plain; charset=utf-8"},
      {".webmanifest", "application/manifest+json"},
  };
  for (const auto& [ext, type] : kTypes) {
    const size_t n = std::char_traits<char>::length(ext);
    if (path.size() >= n && path.compare(path.size() - n, n, ext) == 0) return type;
  }
  return "application/octet-stream";
}

// A request path is served from the UI directory only when every segment
// is a plain name: no "..", no empty or hidden segments, no backslashes.
bool SafeAssetPath(const std::string& path) {
  if (path.size() < 2 || path[0] != '/') return false;
  size_t start = 1;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    std::string_view seg(path.data() + start, slash - start);
    if (seg.empty() || seg.front() == '.' || seg.find('\\') != std::string_view::npos ||
        seg.find('\0') != std::string_view::npos) {
      return false;
    }
    start = slash + 1;
  }
  return true;
}

api::HttpResponse Html(int status, std::string body) {
  api::HttpResponse res;
  res.status = status;
  res.content_type = "text/html; charset=utf-8";
  res.body = std::move(body);
  return res;
}

// GET /api/info (no token): what the sign-in page and the UI's header show.
api::HttpResponse ServerInfo(const ApiOptions& o) {
  return api::Reply(200, {{"version", o.version},
                          {"demo", o.demo},
                          {"model", o.model},
                          {"ui", !o.ui_dir.empty()},
                          {"auth", {{"oidc", o.oidc != nullptr}, {"login_url", "/auth/login"}}}});
}

}  // namespace

void ApiServer::UiRoutes() {
  router_.Add("GET", "/api/info", api::Need::kPublic,
              [this](const api::HttpRequest&) { return ServerInfo(options_); });
}

api::HttpResponse ApiServer::ServeUi(const api::HttpRequest& req) const {
  const std::string& dir = options_.ui_dir;
  if (dir.empty()) {
    return req.path == "/" ? Html(200, kNoUiPage) : api::ReplyError(NotFound("no such route"));
  }
  // A built asset (Vite puts content-hashed names under /assets/: cached for
  // good); anything else is a client-side route and gets index.html, which
  // is revalidated so a rebuild shows at once.
  if (req.path != "/" && SafeAssetPath(req.path)) {
    if (auto bytes = ReadFile(dir + req.path)) {
      api::HttpResponse res;
      res.content_type = ContentType(req.path);
      res.body = std::move(*bytes);
      bool hashed = req.path.rfind("/assets/", 0) == 0;
      res.headers.emplace_back("Cache-Control",
                               hashed ? "public, max-age=31536000, immutable" : "no-cache");
      return res;
    }
  }
  auto html = ReadFile(dir + "/index.html");
  if (!html || html->empty()) return Html(404, kNoUiPage);
  api::HttpResponse res = Html(200, std::move(*html));
  res.headers.emplace_back("Cache-Control", "no-cache");
  return res;
}

}  // namespace maestro
