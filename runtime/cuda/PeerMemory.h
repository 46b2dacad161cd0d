// Peer-visible memory of a communicator: one allocation per rank, whose
// address every rank can use. In one process (this file) that is cudaMalloc
// on the rank's GPU plus peer access; across processes (issue #5) the same
// interface will export cuMem/cudaIpc handles through a bootstrap and map
// the peers' allocations. Nothing else in the runtime knows the difference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace purlin {
namespace rt {

class PeerMemory {
public:
  virtual ~PeerMemory() = default;
  /// Allocates `bytes` (zeroed) for every rank on its device; out[r] is
  /// rank r's allocation as every rank sees it. Returns false with `error`.
  virtual bool allocate(int64_t bytes, std::vector<void *> &out,
                        std::string &error) = 0;
  virtual void release(const std::vector<void *> &ptrs) = 0;
};

/// Ranks of one process: rankDevices[r] is rank r's GPU.
class LocalPeerMemory : public PeerMemory {
public:
  explicit LocalPeerMemory(std::vector<int> rankDevices)
      : dev_(std::move(rankDevices)) {}
  bool allocate(int64_t bytes, std::vector<void *> &out,
                std::string &error) override;
  void release(const std::vector<void *> &ptrs) override;

private:
  std::vector<int> dev_;
};

} // namespace rt
} // namespace purlin
