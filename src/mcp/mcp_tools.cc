#include "mcp/mcp_tools.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/hash.h"

namespace maestro::mcp {
namespace {

const std::vector<std::string>& ServerKeys() {
  static const std::vector<std::string> keys = {
      "command",     "args",       "env",      "cwd",        "readonly_paths",
      "network",     "url",        "headers",  "bearer_env", "required",
      "tools_allow", "tools_deny", "approval", "timeout_ms"};
  return keys;
}

std::string Sanitize(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return out;
}

// YAML scalars arrive typed (8080 is a number): a command line wants text.
Result<std::string> Text(const Json& v, const std::string& key) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() || v.is_boolean()) return v.dump();
  return InvalidArgument(key + " must be a string", key);
}

Result<std::vector<std::string>> TextList(const Json& v, const std::string& key) {
  if (!v.is_array()) return InvalidArgument(key + " must be a list", key);
  std::vector<std::string> out;
  for (const auto& item : v) {
    MAESTRO_ASSIGN_OR_RETURN(std::string s, Text(item, key));
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::map<std::string, std::string>> TextMap(const Json& v, const std::string& key) {
  if (!v.is_object()) return InvalidArgument(key + " must be a mapping", key);
  std::map<std::string, std::string> out;
  for (const auto& [k, item] : v.items()) {
    MAESTRO_ASSIGN_OR_RETURN(std::string text, Text(item, key + "." + k));
    out[k] = std::move(text);
  }
  return out;
}

Result<bool> Flag(const Json& v, const std::string& key) {
  if (v.is_boolean()) return v.get<bool>();
  return InvalidArgument(key + " must be true or false", key);
}

Status ApplyKey(ServerConfig& s, const std::string& name, const Json& v, const std::string& key) {
  if (name == "command") {
    if (v.is_array()) {
      MAESTRO_ASSIGN_OR_RETURN(auto list, TextList(v, key));
      s.command.insert(s.command.begin(), list.begin(), list.end());
    } else {
      MAESTRO_ASSIGN_OR_RETURN(std::string c, Text(v, key));
      s.command.insert(s.command.begin(), c);
    }
  } else if (name == "args") {
    MAESTRO_ASSIGN_OR_RETURN(auto list, TextList(v, key));
    s.command.insert(s.command.end(), list.begin(), list.end());
  } else if (name == "env") {
    MAESTRO_ASSIGN_OR_RETURN(s.env, TextMap(v, key));
  } else if (name == "headers") {
    MAESTRO_ASSIGN_OR_RETURN(s.headers, TextMap(v, key));
  } else if (name == "cwd") {
    MAESTRO_ASSIGN_OR_RETURN(s.cwd, Text(v, key));
  } else if (name == "url") {
    MAESTRO_ASSIGN_OR_RETURN(s.url, Text(v, key));
  } else if (name == "bearer_env") {
    MAESTRO_ASSIGN_OR_RETURN(s.bearer_env, Text(v, key));
  } else if (name == "readonly_paths") {
    MAESTRO_ASSIGN_OR_RETURN(s.readonly_paths, TextList(v, key));
  } else if (name == "tools_allow") {
    MAESTRO_ASSIGN_OR_RETURN(s.tools_allow, TextList(v, key));
  } else if (name == "tools_deny") {
    MAESTRO_ASSIGN_OR_RETURN(s.tools_deny, TextList(v, key));
  } else if (name == "network") {
    MAESTRO_ASSIGN_OR_RETURN(s.network, Flag(v, key));
  } else if (name == "required") {
    MAESTRO_ASSIGN_OR_RETURN(s.required, Flag(v, key));
  } else if (name == "approval") {
    MAESTRO_ASSIGN_OR_RETURN(std::string a, Text(v, key));
    if (a == "never") {
      s.approval = Approval::kNever;
    } else if (a == "once") {
      s.approval = Approval::kOnce;
    } else if (a == "always") {
      s.approval = Approval::kAlways;
    } else {
      return InvalidArgument(key + " must be never, once or always", key);
    }
  } else if (name == "timeout_ms") {
    if (!v.is_number_integer() || v.get<int64_t>() < 1) {
      return InvalidArgument(key + " must be a positive integer", key);
    }
    s.timeout_ms = v.get<int64_t>();
  } else {
    std::string hint = NearestWord(name, ServerKeys());
    return InvalidArgument(
        "unknown key '" + key + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"), key);
  }
  return Status::Ok();
}

bool Listed(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

// POSIX shell single quotes: the sandbox runs `/bin/sh -c <command>`.
std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string WithWorkspace(std::string s, const std::string& workspace) {
  const std::string key = "{workspace}";
  for (size_t at = s.find(key); at != std::string::npos; at = s.find(key, at + workspace.size())) {
    s.replace(at, key.size(), workspace);
  }
  return s;
}

bool Wanted(const JobMcpOptions& o, const std::string& server) {
  if (!o.wanted) return true;
  const std::string prefix = "mcp__" + Sanitize(server) + "__";
  for (const auto& name : *o.wanted) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// The transport of `s`, secrets resolved; kNotFound names a missing variable.
Result<Transport> TransportFor(const ServerConfig& s, const JobMcpOptions& o) {
  auto secret = [&](const std::string& value) -> Result<std::string> {
    if (value.size() < 2 || value[0] != '$') return value;
    auto v = o.getenv ? o.getenv(value.substr(1)) : std::nullopt;
    if (!v || v->empty()) return NotFound(value.substr(1));
    return *v;
  };
  Transport t;
  for (const auto& [k, v] : s.headers) {
    MAESTRO_ASSIGN_OR_RETURN(std::string value, secret(v));
    t.headers[k] = std::move(value);
  }
  if (!s.bearer_env.empty()) {
    MAESTRO_ASSIGN_OR_RETURN(std::string token, secret("$" + s.bearer_env));
    t.headers["Authorization"] = "Bearer " + token;
  }
  if (!s.url.empty()) {
    t.url = s.url;
    return t;
  }
  if (!o.sandbox || !o.sandbox->available()) {
    return Unavailable("stdio MCP servers run in the sandbox, which is unavailable here: " +
                       (o.sandbox ? o.sandbox->unavailable_reason() : std::string("none")));
  }
  std::string line;
  for (const auto& arg : s.command) {
    line += (line.empty() ? "" : " ") + Quote(WithWorkspace(arg, o.workspace));
  }
  if (!s.cwd.empty())
    line = "cd " + Quote(WithWorkspace(s.cwd, o.workspace)) + " && exec " + line;
  else
    line = "exec " + line;
  tools::SandboxCommand sc;
  sc.workspace = o.workspace;
  sc.network = s.network;
  sc.command = line;
  sc.readonly_paths = s.readonly_paths;
  sc.limits = o.sandbox->LimitsFor(o.workspace);
  sc.limits.address_space_bytes = 0;  // V8 reserves far more address space than it uses
  // A server lives as long as its job: CPU time is bounded by the job, not here.
  sc.timeout = std::chrono::hours(24);
  t.argv = o.sandbox->Wrap(sc);
  t.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"HOME", "/tmp"}, {"LANG", "C.UTF-8"}};
  for (const auto& [k, v] : s.env) {
    MAESTRO_ASSIGN_OR_RETURN(std::string value, secret(v));
    t.env[k] = std::move(value);
  }
  return t;
}

tools::ToolHandler CallHandler(std::shared_ptr<Client> client, std::string tool, std::string server,
                               std::string exposed, std::function<void(const Json&)> progress) {
  return
      [client, tool, server, exposed, progress](const Json& args, const tools::ToolContext& ctx) {
        CallOptions co;
        const auto left = ctx.deadline - std::chrono::steady_clock::now();
        if (ctx.deadline != std::chrono::steady_clock::time_point::max()) {
          co.timeout = std::max(std::chrono::milliseconds(1),
                                std::chrono::duration_cast<std::chrono::milliseconds>(left));
        }
        co.cancel = ctx.cancel;
        co.traceparent = ctx.traceparent;
        if (progress) {
          co.on_progress = [progress, exposed, &ctx](double p, std::optional<double> total,
                                                     const std::string& message) {
            progress(Json{{"type", "tool.progress"},
                          {"id", ctx.key.call_id},
                          {"name", exposed},
                          {"progress", p},
                          {"total", total ? Json(*total) : Json(nullptr)},
                          {"message", message}});
          };
        }
        auto r = client->CallTool(tool, args, co);
        if (!r.ok()) {
          return tools::ToolResult::Error("MCP server '" + server + "': " + r.status().message());
        }
        return r->is_error ? tools::ToolResult::Error(r->text) : tools::ToolResult::Ok(r->text);
      };
}

}  // namespace

std::string ExposedName(const std::string& server, const std::string& tool) {
  std::string name = "mcp__" + Sanitize(server) + "__" + Sanitize(tool);
  if (name.size() <= 64) return name;
  return name.substr(0, 55) + "_" + Sha256Hex(server + "/" + tool).substr(0, 8);
}

Result<std::map<std::string, ServerConfig>> ServersFromConfig(const Json& section,
                                                              const std::string& where) {
  std::map<std::string, ServerConfig> out;
  if (section.is_null() || (section.is_object() && section.empty())) return out;
  auto fail = [&](const Status& st) {
    return InvalidArgument(fmt::format("{}: mcp_servers: {}", where, st.message()), st.field());
  };
  if (!section.is_object())
    return fail(InvalidArgument("must map names to servers", "mcp_servers"));
  for (const auto& [name, body] : section.items()) {
    const std::string prefix = "mcp_servers." + name;
    if (name.empty() || name.size() > 32 || Sanitize(name) != name) {
      return fail(InvalidArgument(
          "server name '" + name + "' may use only letters, digits, '-' and '_' (≤ 32)", prefix));
    }
    if (!body.is_object()) return fail(InvalidArgument(prefix + " must be a mapping", prefix));
    ServerConfig s;
    s.name = name;
    s.where = where;
    for (const auto& [key, v] : body.items()) {
      if (Status st = ApplyKey(s, key, v, prefix + "." + key); !st.ok()) return fail(st);
    }
    if (s.command.empty() == s.url.empty()) {
      return fail(
          InvalidArgument(prefix + " needs exactly one of command (stdio) or url (HTTP)", prefix));
    }
    out.emplace(name, std::move(s));
  }
  return out;
}

Result<std::unique_ptr<JobMcp>> JobMcp::Open(const JobMcpOptions& o) {
  std::unique_ptr<JobMcp> job(new JobMcp());
  job->on_progress_ = o.on_progress;
  if (!o.servers) return job;
  for (const auto& [name, s] : *o.servers) {
    if (!Wanted(o, name) || (o.only && !o.only->count(name))) continue;
    auto transport = TransportFor(s, o);
    if (!transport.ok() && transport.status().code() == StatusCode::kNotFound) {
      const std::string var = transport.status().message();
      if (!s.required) {
        spdlog::warn("mcp {}: ${} is not set; its tools are left out", name, var);
        continue;
      }
      job->auth_needed_ = AuthNeeded{
          name, var,
          fmt::format("The MCP server '{}' needs a token: set the environment variable {} for "
                      "maestro (then restart it) and continue the task.",
                      name, var)};
      return job;
    }
    if (!transport.ok()) {
      if (s.required) return transport.status();
      spdlog::warn("mcp {}: {}; its tools are left out", name, transport.status().message());
      continue;
    }
    ClientOptions co;
    co.client_version = o.client_version;
    co.request_timeout = std::chrono::milliseconds(s.timeout_ms);
    co.egress = s.egress;
    const std::string server_name = name;
    co.on_stderr = [server_name](const std::string& line) {
      spdlog::info("mcp {}: {}", server_name, line);
    };
    auto client = Client::Connect(*transport, co);
    if (client.ok()) {
      auto listed = (*client)->ListTools();
      if (listed.ok()) {
        Server srv;
        srv.config = &s;
        srv.client = std::shared_ptr<Client>(std::move(*client));
        for (auto& t : *listed) {
          if (!s.tools_allow.empty() && !Listed(s.tools_allow, t.name)) continue;
          if (Listed(s.tools_deny, t.name)) continue;
          srv.tools.push_back(std::move(t));
        }
        job->servers_.push_back(std::move(srv));
        continue;
      }
      client = listed.status();
    }
    const Status& st = client.status();
    if (IsAuthError(st) && s.required) {
      job->auth_needed_ = AuthNeeded{
          name, s.bearer_env,
          fmt::format("The MCP server '{}' refused its token{}: set a valid one and continue "
                      "the task.",
                      name, s.bearer_env.empty() ? "" : " (" + s.bearer_env + ")")};
      return job;
    }
    if (s.required) return Status(st.code(), "MCP server '" + name + "': " + st.message());
    spdlog::warn("mcp {}: {}; its tools are left out", name, st.message());
  }
  return job;
}

JobMcp::~JobMcp() {
  for (auto& s : servers_) {
    if (s.client) s.client->Close();
  }
}

Status JobMcp::Register(tools::ToolRegistry& registry, std::set<std::string>* auto_allowed) const {
  struct Item {
    std::string exposed;
    const Server* server;
    const Tool* tool;
  };
  std::vector<Item> items;
  std::set<std::string> taken;
  for (const auto& s : servers_) {
    for (const auto& t : s.tools) items.push_back({ExposedName(s.config->name, t.name), &s, &t});
  }
  std::sort(items.begin(), items.end(),
            [](const Item& a, const Item& b) { return a.exposed < b.exposed; });
  for (auto& it : items) {
    // Two tools that sanitize to one name: the later gets the hashed form.
    if (!taken.insert(it.exposed).second || registry.Find(it.exposed)) {
      it.exposed = it.exposed.substr(0, std::min<size_t>(it.exposed.size(), 55)) + "_" +
                   Sha256Hex(it.server->config->name + "/" + it.tool->name).substr(0, 8);
      taken.insert(it.exposed);
    }
    tools::ToolSpec spec;
    spec.name = it.exposed;
    spec.description = !it.tool->description.empty() ? it.tool->description : it.tool->title;
    spec.parameters =
        it.tool->input_schema.is_object() && it.tool->input_schema.value("type", "") == "object"
            ? it.tool->input_schema
            : Json{{"type", "object"}};
    spec.read_only = it.tool->read_only;
    spec.tool_class = tools::ToolClass::kRead;  // the name must be allowed or granted
    spec.approve_each_call = it.server->config->approval == Approval::kAlways;
    spec.timeout = std::chrono::milliseconds(it.server->config->timeout_ms);
    MAESTRO_RETURN_IF_ERROR(
        registry.Register(spec, CallHandler(it.server->client, it.tool->name,
                                            it.server->config->name, it.exposed, on_progress_)));
    if (it.server->config->approval == Approval::kNever && auto_allowed) {
      auto_allowed->insert(it.exposed);
    }
  }
  return Status::Ok();
}

std::vector<std::string> JobMcp::tool_names() const {
  std::vector<std::string> out;
  for (const auto& s : servers_) {
    for (const auto& t : s.tools) out.push_back(ExposedName(s.config->name, t.name));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace maestro::mcp
