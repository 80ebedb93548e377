#include "tools/schema.h"

#include <fmt/format.h>

namespace maestro::tools {
namespace {

std::string Join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

bool HasType(const Json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "integer") {
    return v.is_number_integer() ||
           (v.is_number_float() && v.get<double>() == static_cast<int64_t>(v.get<double>()));
  }
  if (type == "number") return v.is_number();
  if (type == "null") return v.is_null();
  return true;  // unknown type names do not constrain
}

std::string TypeNameOf(const Json& v) {
  if (v.is_number_integer()) return "integer";
  return v.type_name();
}

Status Validate(const Json& schema, const Json& v, const std::string& path);

Status ValidateObject(const Json& schema, const Json& v, const std::string& path) {
  const Json props = schema.value("properties", Json::object());
  if (schema.contains("required")) {
    for (const auto& r : schema["required"]) {
      const std::string key = r.get<std::string>();
      if (!v.contains(key)) {
        return InvalidArgument(fmt::format("missing required field '{}'", Join(path, key)),
                               Join(path, key));
      }
    }
  }
  const bool closed = schema.contains("additionalProperties") &&
                      schema["additionalProperties"].is_boolean() &&
                      !schema["additionalProperties"].get<bool>();
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string field = Join(path, it.key());
    if (props.contains(it.key())) {
      MAESTRO_RETURN_IF_ERROR(Validate(props[it.key()], it.value(), field));
    } else if (closed) {
      std::vector<std::string> names;
      for (auto p = props.begin(); p != props.end(); ++p) names.push_back(p.key());
      std::string near = NearestWord(it.key(), names);
      return InvalidArgument(
          fmt::format("unknown field '{}'{}", field,
                      near.empty() ? "" : fmt::format("; did you mean '{}'?", Join(path, near))),
          field);
    }
  }
  return Status::Ok();
}

Status Validate(const Json& schema, const Json& v, const std::string& path) {
  const std::string shown = path.empty() ? "arguments" : path;
  if (schema.contains("type")) {
    const std::string type = schema["type"].get<std::string>();
    if (!HasType(v, type)) {
      return InvalidArgument(
          fmt::format("field '{}' must be {}, got {}", shown, type, TypeNameOf(v)), path);
    }
  }
  if (schema.contains("enum")) {
    bool found = false;
    for (const auto& e : schema["enum"]) found = found || e == v;
    if (!found) {
      return InvalidArgument(fmt::format("field '{}' must be one of {}, got {}", shown,
                                         schema["enum"].dump(), v.dump()),
                             path);
    }
  }
  if (v.is_number()) {
    const double d = v.get<double>();
    if (schema.contains("minimum") && d < schema["minimum"].get<double>()) {
      return InvalidArgument(
          fmt::format("field '{}' must be >= {}", shown, schema["minimum"].dump()), path);
    }
    if (schema.contains("maximum") && d > schema["maximum"].get<double>()) {
      return InvalidArgument(
          fmt::format("field '{}' must be <= {}", shown, schema["maximum"].dump()), path);
    }
  }
  if (v.is_string() && schema.contains("minLength") &&
      v.get<std::string>().size() < schema["minLength"].get<size_t>()) {
    return InvalidArgument(fmt::format("field '{}' must not be empty", shown), path);
  }
  if (v.is_string() && schema.contains("maxLength") &&
      v.get<std::string>().size() > schema["maxLength"].get<size_t>()) {
    return InvalidArgument(
        fmt::format("field '{}' is longer than {} bytes", shown, schema["maxLength"].get<size_t>()),
        path);
  }
  if (v.is_object()) return ValidateObject(schema, v, path);
  if (v.is_array() && schema.contains("items")) {
    for (size_t i = 0; i < v.size(); ++i) {
      MAESTRO_RETURN_IF_ERROR(Validate(schema["items"], v[i], Join(path, std::to_string(i))));
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidateArgs(const Json& schema, const Json& value) { return Validate(schema, value, ""); }

Json ObjectSchema(Json properties, std::vector<std::string> required) {
  return Json{{"type", "object"},
              {"properties", std::move(properties)},
              {"required", std::move(required)},
              {"additionalProperties", false}};
}

}  // namespace maestro::tools
