// Peer-visible memory of a communicator: one allocation per rank, whose
// address every rank can use. In one process (LocalPeerMemory) that is
// cudaMalloc on the rank's GPU plus peer access; with one process per GPU
// (IpcPeerMemory, issue #5) each process allocates its rank's memory,
// exports a cudaIpc handle through the bootstrap (runtime/bootstrap) and
// maps the peers' allocations. Nothing else in the runtime knows the
// difference, except that only a process's own ranks are initialized by it.
#pragma once

#include <cstdint>
#include <memory>
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
  /// Waits for every process of the communicator (one process: nothing).
  virtual bool barrier(std::string &error) { (void)error; return true; }
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

/// One rank per process (issue #5): this process is rank `rank` of
/// `nranks`, on `device`. allocate() and release() are collective over the
/// processes: every one calls them in the same order with the same size.
/// Handles are cudaIpcGetMemHandle's (legacy IPC: cudaMalloc memory, peers
/// on one host); NVLink multicast is never used.
class Bootstrap;
class IpcPeerMemory : public PeerMemory {
public:
  IpcPeerMemory(std::shared_ptr<Bootstrap> boot, int device)
      : boot_(std::move(boot)), device_(device) {}
  bool allocate(int64_t bytes, std::vector<void *> &out,
                std::string &error) override;
  void release(const std::vector<void *> &ptrs) override;
  bool barrier(std::string &error) override;

private:
  std::shared_ptr<Bootstrap> boot_;
  int device_;
};

} // namespace rt
} // namespace purlin
