#include "notify/wakers.h"

namespace maestro {

uint64_t Wakers::Add(const std::string& key, Fn fn) {
  MutexLock lock(&mu_);
  uint64_t id = next_id_++;
  by_key_[key].emplace(id, std::make_shared<Fn>(std::move(fn)));
  key_of_.emplace(id, key);
  return id;
}

void Wakers::Remove(uint64_t id) {
  MutexLock lock(&mu_);
  auto it = key_of_.find(id);
  if (it == key_of_.end()) return;
  auto set = by_key_.find(it->second);
  if (set != by_key_.end()) {
    set->second.erase(id);
    if (set->second.empty()) by_key_.erase(set);
  }
  key_of_.erase(it);
}

void Wakers::Wake(const std::string& key) {
  std::vector<std::shared_ptr<Fn>> fns;
  {
    MutexLock lock(&mu_);
    auto set = by_key_.find(key);
    if (set == by_key_.end()) return;
    fns.reserve(set->second.size());
    for (const auto& [id, fn] : set->second) fns.push_back(fn);
  }
  for (const auto& fn : fns) (*fn)();
}

void Wakers::WakeAll() {
  std::vector<std::shared_ptr<Fn>> fns;
  {
    MutexLock lock(&mu_);
    for (const auto& [key, set] : by_key_) {
      for (const auto& [id, fn] : set) fns.push_back(fn);
    }
  }
  for (const auto& fn : fns) (*fn)();
}

size_t Wakers::size() const {
  MutexLock lock(&mu_);
  return key_of_.size();
}

}  // namespace maestro
