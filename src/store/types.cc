#include "store/types.h"

#include <iterator>

namespace maestro {

namespace {

// One table per enum, in enumerator order: Name indexes it, Parse searches it.
constexpr std::string_view kJobStatusNames[] = {
    "queued", "running",   "waiting_human", "waiting_subtasks",
    "retry",  "succeeded", "failed",        "cancelled",
};
constexpr std::string_view kCommentKindNames[] = {
    "instruction", "reply", "answer", "question", "result", "handoff", "interjection", "note",
};
constexpr std::string_view kCommentOutcomeNames[] = {"interjection", "reused", "followup"};
constexpr std::string_view kRequestKindNames[] = {"tool", "package", "spawn"};
constexpr std::string_view kRequestStatusNames[] = {"pending", "approved", "denied"};
constexpr std::string_view kGrantScopeNames[] = {"once", "task"};
// A new enumerator without its name fails here, not at run time.
static_assert(std::size(kJobStatusNames) == static_cast<size_t>(JobStatus::kCancelled) + 1);
static_assert(std::size(kCommentKindNames) == static_cast<size_t>(CommentKind::kNote) + 1);
static_assert(std::size(kCommentOutcomeNames) ==
              static_cast<size_t>(CommentOutcome::kFollowUp) + 1);
static_assert(std::size(kRequestKindNames) == static_cast<size_t>(RequestKind::kSpawn) + 1);
static_assert(std::size(kRequestStatusNames) == static_cast<size_t>(RequestStatus::kDenied) + 1);
static_assert(std::size(kGrantScopeNames) == static_cast<size_t>(GrantScope::kTask) + 1);

template <typename E, size_t N>
std::string_view NameOf(E e, const std::string_view (&names)[N]) {
  auto i = static_cast<size_t>(e);
  return i < N ? names[i] : "unknown";
}

template <typename E, size_t N>
std::optional<E> ParseName(std::string_view s, const std::string_view (&names)[N]) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == s) return static_cast<E>(i);
  }
  return std::nullopt;
}

template <size_t N>
std::vector<std::string> NameList(const std::string_view (&names)[N]) {
  return std::vector<std::string>(std::begin(names), std::end(names));
}

}  // namespace

template <>
std::vector<std::string> AllNames<JobStatus>() {
  return NameList(kJobStatusNames);
}
template <>
std::vector<std::string> AllNames<CommentKind>() {
  return NameList(kCommentKindNames);
}
template <>
std::vector<std::string> AllNames<CommentOutcome>() {
  return NameList(kCommentOutcomeNames);
}
template <>
std::vector<std::string> AllNames<RequestKind>() {
  return NameList(kRequestKindNames);
}
template <>
std::vector<std::string> AllNames<RequestStatus>() {
  return NameList(kRequestStatusNames);
}
template <>
std::vector<std::string> AllNames<GrantScope>() {
  return NameList(kGrantScopeNames);
}

std::string_view JobStatusName(JobStatus s) { return NameOf(s, kJobStatusNames); }
std::optional<JobStatus> ParseJobStatus(std::string_view s) {
  return ParseName<JobStatus>(s, kJobStatusNames);
}

std::string_view CommentKindName(CommentKind k) { return NameOf(k, kCommentKindNames); }
std::optional<CommentKind> ParseCommentKind(std::string_view s) {
  return ParseName<CommentKind>(s, kCommentKindNames);
}

std::string_view CommentOutcomeName(CommentOutcome o) { return NameOf(o, kCommentOutcomeNames); }

std::string_view RequestKindName(RequestKind k) { return NameOf(k, kRequestKindNames); }
std::optional<RequestKind> ParseRequestKind(std::string_view s) {
  return ParseName<RequestKind>(s, kRequestKindNames);
}

std::string_view RequestStatusName(RequestStatus s) { return NameOf(s, kRequestStatusNames); }
std::optional<RequestStatus> ParseRequestStatus(std::string_view s) {
  return ParseName<RequestStatus>(s, kRequestStatusNames);
}

std::string_view GrantScopeName(GrantScope s) { return NameOf(s, kGrantScopeNames); }
std::optional<GrantScope> ParseGrantScope(std::string_view s) {
  return ParseName<GrantScope>(s, kGrantScopeNames);
}

bool IsTerminal(JobStatus s) {
  return s == JobStatus::kSucceeded || s == JobStatus::kFailed || s == JobStatus::kCancelled;
}

bool IsParked(JobStatus s) {
  return s == JobStatus::kWaitingHuman || s == JobStatus::kWaitingSubtasks;
}

JobOutcome JobOutcome::Succeeded(std::string result) {
  JobOutcome o;
  o.kind = Kind::kSucceeded;
  o.result = std::move(result);
  return o;
}
JobOutcome JobOutcome::Retry(std::string error, TimeMs at) {
  JobOutcome o;
  o.kind = Kind::kRetry;
  o.error_message = std::move(error);
  o.next_retry_at = at;
  return o;
}
JobOutcome JobOutcome::Failed(std::string error, bool retryable) {
  JobOutcome o;
  o.kind = Kind::kFailed;
  o.error_message = std::move(error);
  o.retryable = retryable;
  return o;
}
JobOutcome JobOutcome::WaitingHuman(std::string reason, std::string resume_movement) {
  JobOutcome o;
  o.kind = Kind::kParked;
  o.park_status = JobStatus::kWaitingHuman;
  o.wait_reason = std::move(reason);
  o.resume_movement = std::move(resume_movement);
  return o;
}
JobOutcome JobOutcome::WaitingSubtasks(std::string resume_movement) {
  JobOutcome o;
  o.kind = Kind::kParked;
  o.park_status = JobStatus::kWaitingSubtasks;
  o.wait_reason = "subtasks";
  o.resume_movement = std::move(resume_movement);
  return o;
}
JobOutcome JobOutcome::Cancelled(std::string why) {
  JobOutcome o;
  o.kind = Kind::kCancelled;
  o.error_message = std::move(why);
  return o;
}
JobOutcome JobOutcome::Released() {
  JobOutcome o;
  o.kind = Kind::kReleased;
  return o;
}

}  // namespace maestro
