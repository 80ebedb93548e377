// The web UI routes: the built React app (ui/dist) at `/`, the open
// GET /api/info the UI reads first (demo flag), and the index.html fallback
// for client-side routes such as /tasks/<id>, so a reload of any UI address
// works. API routes are registered before these and never shadowed: the
// fallback excludes /api/ and /metrics, and unknown /api/ paths stay 404 JSON.
#include <httplib.h>

#include <fstream>
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

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

void ApiServer::UiRoutes() {
  auto& srv = *server_;
  srv.Get("/api/info", [this](const httplib::Request&, httplib::Response& res) {
    api::Reply(res, 200,
               {{"version", options_.version},
                {"demo", options_.demo},
                {"model", options_.model},
                {"ui", !options_.ui_dir.empty()}});
  });
  const std::string dir = options_.ui_dir;
  if (dir.empty()) {
    srv.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(kNoUiPage, "text/html; charset=utf-8");
    });
    return;
  }
  srv.set_mount_point("/", dir);
  // Vite puts content-hashed names under /assets/: cache them for good;
  // everything else (index.html) is revalidated so a rebuild shows at once.
  srv.set_file_request_handler([](const httplib::Request& req, httplib::Response& res) {
    bool hashed = req.path.rfind("/assets/", 0) == 0;
    res.set_header("Cache-Control", hashed ? "public, max-age=31536000, immutable" : "no-cache");
  });
  srv.Get(R"(/(?!api/|api$|metrics$).*)", [dir](const httplib::Request&, httplib::Response& res) {
    std::string html = ReadFile(dir + "/index.html");
    if (html.empty()) {
      res.status = 404;
      res.set_content(kNoUiPage, "text/html; charset=utf-8");
      return;
    }
    res.set_header("Cache-Control", "no-cache");
    res.set_content(html, "text/html; charset=utf-8");
  });
}

}  // namespace maestro
