// The callback bootstrap (Bootstrap.h): the application's all-gather of
// fixed-size blocks (MPI_Allgather's contract) carries blobs of any size in
// two calls: the sizes, then every blob padded to the largest. And the
// grouping of purlinCommSplit, which any bootstrap's ranks compute alike.
#include "Bootstrap.h"

#include <algorithm>
#include <cstring>

namespace purlin {
namespace rt {

namespace {
class CallbackBootstrap : public Bootstrap {
public:
  CallbackBootstrap(const BootstrapCallbacks &cb, int rank, int nranks)
      : Bootstrap(rank, nranks), cb_(cb) {}

  bool allGather(const std::string &mine, std::vector<std::string> &out,
                 std::string &error) override {
    if (broken_) {
      error = "bootstrap: unusable after an earlier error";
      return false;
    }
    const int R = nranks_;
    const std::string ex = " (exchange " + std::to_string(round_++) + ")";
    uint64_t n = mine.size();
    std::vector<uint64_t> sizes(R, 0);
    if (cb_.allgather(&n, sizes.data(), sizeof n, cb_.ctx) != 0)
      return fail("bootstrap: the application's allgather failed" + ex, error);
    uint64_t most = *std::max_element(sizes.begin(), sizes.end());
    if (sizes[rank_] != n)
      return fail("bootstrap: the application's allgather put another "
                  "rank's block in this rank's place" +
                      ex,
                  error);
    out.assign(R, std::string());
    if (most == 0)
      return true;
    std::string send(most, '\0'), recv(most * R, '\0');
    std::memcpy(&send[0], mine.data(), mine.size());
    if (cb_.allgather(send.data(), &recv[0], most, cb_.ctx) != 0)
      return fail("bootstrap: the application's allgather failed" + ex, error);
    for (int r = 0; r < R; ++r)
      out[r] = recv.substr(r * most, sizes[r]);
    return true;
  }

  bool barrier(std::string &error) override {
    if (!cb_.barrier)
      return Bootstrap::barrier(error);
    if (broken_) {
      error = "bootstrap: unusable after an earlier error";
      return false;
    }
    if (cb_.barrier(cb_.ctx) != 0)
      return fail("bootstrap: the application's barrier failed", error);
    return true;
  }

  void abort() override { broken_ = true; }

private:
  bool fail(const std::string &why, std::string &error) {
    error = why;
    broken_ = true;
    return false;
  }
  BootstrapCallbacks cb_;
  int64_t round_ = 0;
};
} // namespace

std::vector<int> splitGroup(const std::vector<int> &colors,
                            const std::vector<int> &keys, int me,
                            int &newRank) {
  newRank = -1;
  std::vector<int> group;
  if (me < 0 || me >= (int)colors.size() || colors[me] < 0)
    return group;
  std::vector<std::pair<int, int>> order; // (key, rank)
  for (int r = 0; r < (int)colors.size(); ++r)
    if (colors[r] == colors[me])
      order.push_back({keys[r], r});
  std::sort(order.begin(), order.end());
  for (auto &kr : order) {
    if (kr.second == me)
      newRank = (int)group.size();
    group.push_back(kr.second);
  }
  return group;
}

std::unique_ptr<Bootstrap> fromCallbacks(const BootstrapCallbacks &cb, int rank,
                                         int nranks, std::string &error) {
  if (!cb.allgather) {
    error = "bootstrap: the allgather callback is null";
    return nullptr;
  }
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    error = "bootstrap: rank " + std::to_string(rank) + " of " +
            std::to_string(nranks);
    return nullptr;
  }
  return std::make_unique<CallbackBootstrap>(cb, rank, nranks);
}

} // namespace rt
} // namespace purlin
