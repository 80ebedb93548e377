#include "core/ids.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

namespace maestro {
namespace {

TEST(IdsTest, UuidIsVersion4AndUnique) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    std::string id = NewUuid();
    ASSERT_TRUE(IsUuid(id)) << id;
    EXPECT_EQ(id[14], '4');
    EXPECT_NE(std::string("89ab").find(id[19]), std::string::npos);
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_FALSE(IsUuid("not-a-uuid"));
}

TEST(IdsTest, SortableIdsOrderByTimeAndStayMonotonicWithinAMillisecond) {
  std::string a = NewSortableId(1'000);
  std::string b = NewSortableId(2'000);
  EXPECT_EQ(a.size(), 26u);
  EXPECT_LT(a, b);
  std::string prev = NewSortableId(5'000);
  for (int i = 0; i < 10'000; ++i) {
    std::string next = NewSortableId(5'000);  // same ms
    ASSERT_LT(prev, next);
    prev = next;
  }
  // A clock that goes back never produces a smaller id.
  EXPECT_LT(prev, NewSortableId(4'000));
}

TEST(IdsTest, SortableIdsAreUniqueAcrossThreads) {
  std::vector<std::vector<std::string>> per(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5'000; ++i) per[t].push_back(NewSortableId(1'700'000'000'000));
    });
  }
  for (auto& t : threads) t.join();
  std::set<std::string> all;
  for (auto& v : per) all.insert(v.begin(), v.end());
  EXPECT_EQ(all.size(), 20'000u);
}

}  // namespace
}  // namespace maestro
