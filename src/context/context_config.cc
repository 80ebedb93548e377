#include "context/context_config.h"

#include <vector>

namespace maestro::context {

namespace {

// Seed 002's `enabled` and `base_dir` (issue 45 item 11). Their seed
// defaults are what maestro always does, so a config that states them runs;
// anything else is refused naming the key and what took its place, instead
// of being ignored (a person who turns contexts off must not find them on).
Status SeedOnlyKey(const std::string& key, const Json& v) {
  const std::string field = "context_storage." + key;
  if (key == "enabled") {
    if (!v.is_boolean()) return InvalidArgument("enabled must be true or false", field);
    if (v.get<bool>()) return Status::Ok();
    return InvalidArgument(
        "enabled: false is not supported: maestro always keeps a task's conversation in files "
        "(the LLM request is streamed from current.jsonl, replay and recovery read them). "
        "Remove the key; cleanup_days: 0 keeps them, a positive value removes finished ones",
        field);
  }
  if (!v.is_string()) return InvalidArgument("base_dir must be a string", field);
  const std::string dir = v.get<std::string>();
  if (dir == kContextsBaseDir || dir == std::string(kContextsBaseDir) + "/") return Status::Ok();
  return InvalidArgument("base_dir '" + dir +
                             "' is not supported: contexts live in {data_dir}/contexts (the "
                             "seed's default 'contexts'). Set data_dir (MAESTRO_DATA_DIR) "
                             "to move them, and remove base_dir",
                         field);
}

}  // namespace

Result<ContextConfig> ParseContextConfig(const Json& section, ContextConfig c) {
  if (section.is_null()) return c;
  if (!section.is_object())
    return InvalidArgument("context_storage must be a map", "context_storage");
  static const std::vector<std::string> kKeys = {"context_length",
                                                 "compression_threshold",
                                                 "handoff_threshold",
                                                 "keep_recent_messages",
                                                 "cleanup_days",
                                                 "summary_prompt",
                                                 "summary_max_attempts",
                                                 "handoff_max_wait_iterations",
                                                 "enabled",
                                                 "base_dir",
                                                 "request_json"};
  try {
    for (auto it = section.begin(); it != section.end(); ++it) {
      const std::string& k = it.key();
      const Json& v = it.value();
      std::string field = "context_storage." + k;
      if (k == "context_length")
        c.context_length = v.get<int64_t>();
      else if (k == "compression_threshold")
        c.compression_threshold = v.get<double>();
      else if (k == "handoff_threshold")
        c.handoff_threshold = v.get<double>();
      else if (k == "keep_recent_messages")
        c.keep_recent_messages = v.get<int>();
      else if (k == "cleanup_days")
        c.cleanup_days = v.get<int>();
      else if (k == "summary_prompt")
        c.summary_prompt = v.get<std::string>();
      else if (k == "summary_max_attempts")
        c.summary_max_attempts = v.get<int>();
      else if (k == "handoff_max_wait_iterations")
        c.handoff_max_wait_iterations = v.get<int>();
      else if (k == "request_json")
        c.request_json = v.get<bool>();
      else if (k == "enabled" || k == "base_dir")
        MAESTRO_RETURN_IF_ERROR(SeedOnlyKey(k, v));
      else {
        std::string near = NearestWord(k, kKeys);
        return InvalidArgument(
            "unknown key '" + k + "'" + (near.empty() ? "" : "; did you mean '" + near + "'?"),
            field);
      }
    }
  } catch (const Json::exception& e) {
    return InvalidArgument(std::string("context_storage: wrong value type: ") + e.what(),
                           "context_storage");
  }
  if (!(c.handoff_threshold > 0 && c.handoff_threshold < c.compression_threshold &&
        c.compression_threshold <= 1.0)) {
    return InvalidArgument(
        "need 0 < handoff_threshold < compression_threshold <= 1 (seed 004: the handoff must "
        "come before compression)",
        "context_storage.handoff_threshold");
  }
  if (c.keep_recent_messages < 1) {
    return InvalidArgument("keep_recent_messages must be >= 1",
                           "context_storage.keep_recent_messages");
  }
  if (c.context_length <= 0)
    return InvalidArgument("context_length must be > 0", "context_storage.context_length");
  if (c.summary_max_attempts < 1) c.summary_max_attempts = 1;
  return c;
}

}  // namespace maestro::context
