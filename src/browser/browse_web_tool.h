// BrowseWeb: the agent's browser (seed 000 "browser context"). One tool with
// an action — open, read, click, type, select, scroll, screenshot, back —
// acting on the job's browser (BrowserService). An action answers with the
// page as readable text (main content, then the links numbered for `click
// {link}`); a screenshot is written into the workspace as a PNG and its path
// returned. A failure is an "Error: …" result the model can act on.
//
// A page that asks for a login (a visible password field, or HTTP 401)
// after open or click parks the job (seed 001: WAITING_HUMAN_BROWSER,
// wait_reason browser_login): the ToolResult carries the park, the engine
// settles the movement with it, the browser stays open for the person's
// live view, and Done resumes the job in the same movement with the session.
// After that hand-over the next login page is reported, not parked on.
//
// Not read-only (open/click change the page the next call sees), so the
// Dispatcher runs BrowseWeb calls one after another.
//
// Thread safety: the handler may be called from any thread; the session
// serializes actions.
#pragma once

#include <string>

#include "browser/browser_service.h"
#include "core/status.h"
#include "tools/registry.h"
#include "tools/tool_names.h"

namespace maestro::browser {

inline constexpr const char* kBrowserLoginWait = "browser_login";

tools::ToolSpec BrowseWebToolSpec();

// Registers BrowseWeb (and RequestCaptchaHelp, the engine's park tool that
// goes with it) for one job: its browser is `service`'s for job_id,
// with the profile of task_id and the allow-list of `space`.
Status RegisterBrowseWeb(tools::ToolRegistry& registry, BrowserService* service, std::string job_id,
                         std::string task_id, std::string space);

}  // namespace maestro::browser
