#include "core/output_cap.h"

#include <fmt/format.h>

namespace maestro {
namespace {

bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Largest prefix length <= n that does not split a UTF-8 character.
size_t PrefixBoundary(std::string_view s, size_t n) {
  if (n >= s.size()) return s.size();
  while (n > 0 && IsContinuation(s[n])) --n;
  return n;
}

// Smallest suffix start >= from that does not split a UTF-8 character.
size_t SuffixBoundary(std::string_view s, size_t from) {
  while (from < s.size() && IsContinuation(s[from])) ++from;
  return from;
}

// Length of `s` without a trailing, incomplete UTF-8 sequence.
size_t CompleteLength(std::string_view s) {
  size_t i = s.size();
  size_t back = 0;
  while (i > 0 && back < 4 && IsContinuation(s[i - 1])) --i, ++back;
  if (i == 0) return s.size();
  const unsigned char lead = static_cast<unsigned char>(s[i - 1]);
  size_t need = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : 4;
  return back + 1 >= need ? s.size() : i - 1;
}

std::string Marker(size_t cut) { return fmt::format("\n[... {} bytes cut ...]\n", cut); }

}  // namespace

std::string CapOutput(std::string_view text, size_t cap) {
  if (text.size() <= cap) return std::string(text);
  const size_t half = cap / 2;
  const size_t head = PrefixBoundary(text, half);
  const size_t tail = SuffixBoundary(text, text.size() - half);
  std::string out(text.substr(0, head));
  out += Marker(tail - head);
  out.append(text.substr(tail));
  return out;
}

void HeadTailBuffer::Append(std::string_view data) {
  total_ += data.size();
  if (head_.size() < half_) {
    const size_t take = std::min(half_ - head_.size(), data.size());
    head_.append(data.substr(0, take));
    data.remove_prefix(take);
  }
  if (data.empty()) return;
  tail_.append(data);
  // Amortized: trim only when the tail has doubled.
  if (tail_.size() > 2 * half_ + 4096) tail_.erase(0, tail_.size() - half_);
}

std::string HeadTailBuffer::Finish() const {
  std::string tail = tail_.size() > half_ ? tail_.substr(tail_.size() - half_) : tail_;
  if (total_ <= head_.size() + tail.size()) return head_ + tail;
  std::string_view t(tail);
  const size_t start = SuffixBoundary(t, 0);
  const size_t head = CompleteLength(head_);
  return head_.substr(0, head) + Marker(total_ - head - (t.size() - start)) +
         std::string(t.substr(start));
}

}  // namespace maestro
