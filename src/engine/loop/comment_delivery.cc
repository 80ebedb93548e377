#include "engine/loop/comment_delivery.h"

#include <fmt/format.h>

#include <fstream>

namespace maestro::engine {

std::string CommentTag(const Comment& c) { return "[comment " + c.id + "]"; }

std::string DeliveredCommentText(const Comment& c) {
  return fmt::format("{} {}: {}", CommentTag(c), c.author.empty() ? "user" : c.author, c.body);
}

Result<std::vector<Comment>> TakeUndelivered(TaskRecords& store, const std::string& job_id,
                                             const std::string& transcript_path) {
  MAESTRO_ASSIGN_OR_RETURN(std::vector<Comment> pending, store.ListUndeliveredComments(job_id));
  if (pending.empty()) return pending;
  std::vector<bool> seen(pending.size(), false);
  // One pass over the transcript: it is the conversation every later request
  // is built from, so a tag found there has been delivered.
  std::ifstream in(transcript_path, std::ios::binary);
  for (std::string line; in && std::getline(in, line);) {
    if (line.find("[comment ") == std::string::npos) continue;
    for (size_t i = 0; i < pending.size(); ++i) {
      if (!seen[i] && line.find(CommentTag(pending[i])) != std::string::npos) seen[i] = true;
    }
  }
  std::vector<Comment> fresh, already;
  for (size_t i = 0; i < pending.size(); ++i) {
    (seen[i] ? already : fresh).push_back(std::move(pending[i]));
  }
  MAESTRO_RETURN_IF_ERROR(AckDelivered(store, already));
  return fresh;
}

bool ConversationHolds(const std::string& transcript_path, const std::string& text) {
  std::string escaped = Json(text).dump(-1, ' ', false, Json::error_handler_t::replace);
  escaped = escaped.substr(1, escaped.size() - 2);  // without the quotes
  std::ifstream in(transcript_path, std::ios::binary);
  for (std::string line; in && std::getline(in, line);) {
    if (line.find(escaped) != std::string::npos) return true;
  }
  return false;
}

Status AckDelivered(TaskRecords& store, const std::vector<Comment>& comments) {
  std::vector<std::string> ids;
  for (const Comment& c : comments) ids.push_back(c.id);
  return store.AckDeliveredComments(ids);
}

}  // namespace maestro::engine
