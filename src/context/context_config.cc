#include "context/context_config.h"

#include <vector>

namespace maestro::context {

Result<ContextConfig> ParseContextConfig(const Json& section, ContextConfig c) {
  if (section.is_null()) return c;
  if (!section.is_object())
    return InvalidArgument("context_storage must be a map", "context_storage");
  static const std::vector<std::string> kKeys = {
      "context_length",       "compression_threshold",
      "handoff_threshold",    "keep_recent_messages",
      "cleanup_days",         "summary_prompt",
      "summary_max_attempts", "handoff_max_wait_iterations"};
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
