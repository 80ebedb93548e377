#include "browser/browse_web_tool.h"

#include <fmt/format.h>

#include "core/env.h"
#include "core/tree_root.h"
#include "core/utf8.h"
#include "tools/park_tools.h"
#include "tools/schema.h"

namespace maestro::browser {
namespace {

std::string Describe(const PageView& p) {
  std::string head = fmt::format("URL: {}\nTitle: {}\n", p.url, p.title);
  if (p.status) head += fmt::format("HTTP status: {}\n", p.status);
  return head + "\n" + p.text;
}

// A file name from the call id (untrusted: the model chose it).
std::string ScreenshotName(const std::string& call_id) {
  std::string name;
  for (char c : call_id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    name.push_back(ok ? c : '_');
    if (name.size() >= 64) break;
  }
  return "screenshots/" + (name.empty() ? std::string("page") : name) + ".png";
}

std::string Str(const Json& args, const char* key) {
  const Json& v = args.value(key, Json());
  return v.is_string() ? v.get<std::string>() : "";
}

tools::ToolResult Act(BrowserService* service, const std::string& job_id,
                      const std::string& task_id, const std::string& space, const Json& args,
                      const tools::ToolContext& ctx) {
  const std::string action = Str(args, "action");
  auto need = [&](const char* key) -> std::optional<tools::ToolResult> {
    if (Str(args, key).empty()) {
      return tools::ToolResult::Error(fmt::format("action {} needs `{}`", action, key));
    }
    return std::nullopt;
  };
  auto session = service->ForJob(job_id, task_id, space);
  if (!session.ok()) return tools::ToolResult::Error("browser: " + session.status().message());
  BrowserSession& b = **session;
  Result<PageView> view = Internal("no action ran");  // every branch below sets it
  bool navigates = false;
  if (action == "open") {
    if (auto e = need("url")) return *e;
    view = b.Open(Str(args, "url"));
    navigates = true;
  } else if (action == "read") {
    view = b.Read();
  } else if (action == "click") {
    const Json& link = args.value("link", Json());
    if (link.is_number_integer()) {
      view = b.ClickLink(link.get<int>());
    } else {
      if (auto e = need("selector"))
        return tools::ToolResult::Error("click needs `link` or `selector`");
      view = b.ClickSelector(Str(args, "selector"));
    }
    navigates = true;
  } else if (action == "type") {
    if (auto e = need("selector")) return *e;
    view = b.Type(Str(args, "selector"), Str(args, "text"));
  } else if (action == "select") {
    if (auto e = need("selector")) return *e;
    if (auto e = need("text")) return *e;
    view = b.Select(Str(args, "selector"), Str(args, "text"));
  } else if (action == "scroll") {
    view = b.Scroll();
  } else if (action == "back") {
    view = b.Back();
    navigates = true;
  } else if (action == "screenshot") {
    auto png = b.Screenshot();
    if (!png.ok()) return tools::ToolResult::Error("browser: " + png.status().message());
    const std::string rel = ScreenshotName(ctx.key.call_id);
    // Beneath the workspace's TreeRoot: a screenshots/ the agent swapped for
    // a symlink is refused, never written through.
    Status st = [&]() -> Status {
      MAESTRO_ASSIGN_OR_RETURN(TreeRoot root, TreeRoot::Open(ctx.workspace_root));
      MAESTRO_RETURN_IF_ERROR(root.MakeDirs("screenshots"));
      MAESTRO_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> f, root.OpenWrite(rel));
      MAESTRO_RETURN_IF_ERROR(f->Append(*png));
      return f->Close();
    }();
    if (!st.ok()) return tools::ToolResult::Error("could not save the screenshot: " + st.message());
    return tools::ToolResult::Ok(
        fmt::format("Screenshot of the page saved to {} ({} bytes, PNG).", rel, png->size()));
  } else {
    return tools::ToolResult::Error(
        "action must be one of open, read, click, type, select, scroll, screenshot, back");
  }
  if (!view.ok()) return tools::ToolResult::Error(view.status().message());
  tools::ToolResult r = tools::ToolResult::Ok(Describe(*view));
  if (navigates && view->login_required) {
    if (service->TakeLoginHandedOver(job_id)) {
      r.content =
          "A person already logged in for you in this task, yet this page still asks "
          "for a login. Do not ask again; work with what is reachable.\n\n" +
          r.content;
    } else {
      r.content =
          "This page asks for a login. The task now waits for a person to log in in "
          "the browser's live view; it resumes here with the logged-in session.\n\n" +
          r.content;
      r.park_wait_reason = kBrowserLoginWait;
      service->Parked(job_id);
    }
  }
  return r;
}

}  // namespace

tools::ToolSpec BrowseWebToolSpec() {
  const Json str = {{"type", "string"}};
  tools::ToolSpec s;
  s.name = tools::kBrowseWeb;
  s.description =
      "Use a web browser. action: open {url} | read | click {link: number from the links list, "
      "or selector} | type {selector, text} | select {selector, text: option} | scroll | back | "
      "screenshot (saved as a PNG in the workspace). Answers with the page's text and its "
      "numbered links. Only the hosts this workspace allows can be reached. A page that needs a "
      "login hands over to a person and the task continues once they have logged in.";
  s.parameters = tools::ObjectSchema(
      {{"action",
        {{"type", "string"},
         {"enum", {"open", "read", "click", "type", "select", "scroll", "screenshot", "back"}}}},
       {"url", str},
       {"link", {{"type", "integer"}, {"minimum", 1}}},
       {"selector", str},
       {"text", str}},
      {"action"});
  s.read_only = false;
  s.tool_class = tools::ToolClass::kRead;
  s.timeout = std::chrono::milliseconds(60'000);
  s.output_cap_bytes = 32 * 1024;
  return s;
}

Status RegisterBrowseWeb(tools::ToolRegistry& registry, BrowserService* service, std::string job_id,
                         std::string task_id, std::string space) {
  MAESTRO_RETURN_IF_ERROR(registry.Register(tools::RequestCaptchaHelpToolSpec(), nullptr));
  return registry.Register(
      BrowseWebToolSpec(),
      [service, job_id = std::move(job_id), task_id = std::move(task_id), space = std::move(space)](
          const Json& args, const tools::ToolContext& ctx) {
        return Act(service, job_id, task_id, space, args, ctx);
      });
}

}  // namespace maestro::browser
