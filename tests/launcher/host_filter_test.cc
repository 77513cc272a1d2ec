// launcher/host_filter.h: DeepSpeed's --include / --exclude over the head's hosts.
#include "launcher/host_filter.h"

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace launcher {
namespace {

// gpu1 slots=4, root@gpu2 slots=2, gpu3 (slots not given).
std::vector<HostEntry> Hosts() {
  HostEntry a, b, c;
  a.host = "gpu1";
  a.slots = 4;
  b.host = "root@gpu2";
  b.slots = 2;
  c.host = "gpu3";
  return {a, b, c};
}

struct Kept {
  std::string host;
  int slots;
  std::vector<int> gpu_ids, exclude_gpu_ids;
  bool operator==(const Kept& o) const {
    return host == o.host && slots == o.slots && gpu_ids == o.gpu_ids &&
           exclude_gpu_ids == o.exclude_gpu_ids;
  }
};

void PrintTo(const Kept& k, std::ostream* os) {
  *os << k.host << " slots=" << k.slots << " ids=" << k.gpu_ids.size()
      << " excluded=" << k.exclude_gpu_ids.size();
}

std::vector<Kept> Filter(const std::string& include, const std::string& exclude) {
  auto got = FilterHosts(Hosts(), include, exclude, "hosts.txt");
  EXPECT_TRUE(got.ok()) << got.status();
  std::vector<Kept> out;
  if (!got.ok()) return out;
  for (const HostEntry& h : *got) out.push_back({h.host, h.slots, h.gpu_ids, h.exclude_gpu_ids});
  return out;
}

TEST(HostFilter, NoFilterKeepsEverything) { EXPECT_EQ(Filter("", "").size(), 3u); }

TEST(HostFilter, IncludeKeepsTheNamedHostsAndGpus) {
  EXPECT_EQ(Filter("gpu1:0,2@gpu3", ""),
            (std::vector<Kept>{{"gpu1", 2, {0, 2}, {}}, {"gpu3", 0, {}, {}}}));
  // By the agent's name (without the user@ of the hosts file); ids on a host of unknown slots
  // pass to its agent.
  EXPECT_EQ(Filter("gpu2@gpu3:1", ""),
            (std::vector<Kept>{{"root@gpu2", 2, {}, {}}, {"gpu3", 1, {1}, {}}}));
  EXPECT_EQ(Filter("gpu2:1", ""), (std::vector<Kept>{{"root@gpu2", 1, {1}, {}}}));
}

TEST(HostFilter, ExcludeDropsHostsOrGpus) {
  EXPECT_EQ(Filter("", "gpu3"), (std::vector<Kept>{{"gpu1", 4, {}, {}}, {"root@gpu2", 2, {}, {}}}));
  // Known slots: the GPUs left; unknown: the agent excludes them.
  EXPECT_EQ(
      Filter("", "gpu1:1,3@gpu3:0"),
      (std::vector<Kept>{{"gpu1", 2, {0, 2}, {}}, {"root@gpu2", 2, {}, {}}, {"gpu3", 0, {}, {0}}}));
  // Every GPU of a host excluded: the host goes.
  EXPECT_EQ(Filter("", "gpu2:0,1"), (std::vector<Kept>{{"gpu1", 4, {}, {}}, {"gpu3", 0, {}, {}}}));
}

TEST(HostFilter, ErrorsNameTheFlagAndTheFault) {
  auto error = [](const std::string& include, const std::string& exclude) {
    auto got = FilterHosts(Hosts(), include, exclude, "hosts.txt");
    EXPECT_FALSE(got.ok()) << include << " / " << exclude;
    return got.ok() ? std::string() : std::string(got.status().message());
  };
  EXPECT_EQ(error("gpu1", "gpu2"), "--include and --exclude: give one or the other");
  EXPECT_EQ(error("gpu9", ""), "--include: host gpu9 is not in hosts.txt (gpu1, gpu2, gpu3)");
  EXPECT_EQ(error("", "gpu1:4"), "--exclude: host gpu1 has slots=4 (GPUs 0-3): no GPU 4");
  EXPECT_EQ(error("gpu1:x", ""), "--include 'gpu1:x': 'x' is not a GPU index (0, 1, ...)");
  EXPECT_EQ(error("gpu1:1,1", ""), "--include 'gpu1:1,1': GPU 1 is listed twice");
  EXPECT_EQ(error("gpu1@gpu1:0", ""), "--include 'gpu1@gpu1:0': host gpu1 is named twice");
  EXPECT_EQ(error("gpu1@", ""),
            "--include 'gpu1@': expected HOST[:ID,ID...][@HOST...], found an empty host");
  EXPECT_EQ(error("", "gpu1@gpu2@gpu3"), "--exclude leaves no host of hosts.txt");
}

TEST(HostFilter, ParseGpuIds) {
  EXPECT_EQ(*ParseGpuIds("3,0,1", "--gpu_ids"), (std::vector<int>{3, 0, 1}));
  EXPECT_EQ(ParseGpuIds("-1", "--gpu_ids").status().message(),
            "--gpu_ids: '-1' is not a GPU index (0, 1, ...)");
  EXPECT_EQ(ParseGpuIds("", "--gpu_ids").status().message(),
            "--gpu_ids: '' is not a GPU index (0, 1, ...)");
}

TEST(HostFilter, SelectGpusOnTheAgent) {
  const std::vector<GpuInfo> seen = {
      {"0", "A", "0000:01:00.0"}, {"3", "B", "0000:02:00.0"}, {"5", "C", "0000:03:00.0"}};
  auto ids = [](const absl::StatusOr<std::vector<GpuInfo>>& got) {
    std::vector<std::string> out;
    for (const GpuInfo& g : *got) out.push_back(g.id);
    return out;
  };
  EXPECT_EQ(ids(SelectGpus(seen, {}, {})), (std::vector<std::string>{"0", "3", "5"}));
  // Indices among the GPUs seen (CUDA_VISIBLE_DEVICES=0,3,5: index 1 is GPU 3).
  EXPECT_EQ(ids(SelectGpus(seen, {2, 1}, {})), (std::vector<std::string>{"5", "3"}));
  EXPECT_EQ(ids(SelectGpus(seen, {}, {1})), (std::vector<std::string>{"0", "5"}));
  EXPECT_EQ(SelectGpus(seen, {0, 3}, {}).status().message(),
            "--gpu_ids 0,3: this host shows 3 GPU(s) (0-2), no GPU 3");
  EXPECT_EQ(SelectGpus({}, {0}, {}).status().message(),
            "--gpu_ids 0: this host shows 0 GPU(s), no GPU 0");
  EXPECT_EQ(SelectGpus(seen, {}, {0, 1, 2}).status().message(),
            "--exclude_gpu_ids 0,1,2 leaves no GPU");
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
