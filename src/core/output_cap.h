// Output caps: a tool result never floods the conversation.
//
// Where it sits: the Dispatcher cuts every result to its tool's
// output_cap_bytes before it is recorded and returned; RunCommand and Grep
// also cap while collecting so a runaway process costs bounded memory.
// The head and the tail are kept (the start says what ran, the end holds the
// error or the summary) and the cut is marked with how much was dropped.
//
// Thread safety: pure functions; HeadTailBuffer is single-threaded.
#pragma once

#include <string>
#include <string_view>

namespace maestro {

// `text` when it fits in `cap` bytes; otherwise head + marker + tail, with
// both ends cut on UTF-8 character boundaries.
std::string CapOutput(std::string_view text, size_t cap);

// Collects a stream keeping at most cap/2 head bytes and cap/2 tail bytes,
// counting what fell in between.
class HeadTailBuffer {
 public:
  explicit HeadTailBuffer(size_t cap) : half_(cap / 2) {}
  void Append(std::string_view data);
  // The kept bytes with the cut marked.
  std::string Finish() const;
  size_t total_bytes() const { return total_; }

 private:
  size_t half_;
  size_t total_ = 0;
  std::string head_;
  std::string tail_;  // ring of the last half_ bytes, kept linear for simplicity
};

}  // namespace maestro
