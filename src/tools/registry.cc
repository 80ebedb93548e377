#include "tools/registry.h"

namespace maestro::tools {

Json ToolEntry(const ToolSpec& spec) {
  return Json{
      {"type", "function"},
      {"function",
       {{"name", spec.name}, {"description", spec.description}, {"parameters", spec.parameters}}}};
}

Status ToolRegistry::Register(ToolSpec spec, ToolHandler handler) {
  if (spec.name.empty()) return InvalidArgument("tool name must not be empty", "name");
  if (index_.count(spec.name)) return Conflict("tool " + spec.name + " is already registered");
  if (!spec.parameters.is_object() || spec.parameters.value("type", "") != "object") {
    return InvalidArgument("tool " + spec.name + ": parameters must be an object schema",
                           "parameters");
  }
  Entry e{std::move(spec), std::move(handler), {}};
  e.serialized = ToolEntry(e.spec).dump();
  index_[e.spec.name] = entries_.size();
  entries_.push_back(std::move(e));
  return Status::Ok();
}

const ToolSpec* ToolRegistry::Find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second].spec;
}

const ToolHandler* ToolRegistry::Handler(const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end() || !entries_[it->second].handler) return nullptr;
  return &entries_[it->second].handler;
}

std::vector<std::string> ToolRegistry::Names() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.spec.name);
  return out;
}

Json ToolRegistry::ToolsArray(const std::set<std::string>& allowed) const {
  Json out = Json::array();
  for (const auto& e : entries_) {
    if (allowed.count(e.spec.name)) out.push_back(Json::parse(e.serialized));
  }
  return out;
}

std::string ToolRegistry::ToolsArrayText(const std::set<std::string>& allowed) const {
  std::string out = "[";
  bool first = true;
  for (const auto& e : entries_) {
    if (!allowed.count(e.spec.name)) continue;
    if (!first) out += ",";
    out += e.serialized;
    first = false;
  }
  return out + "]";
}

}  // namespace maestro::tools
