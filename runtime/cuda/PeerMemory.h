// Peer-visible memory of a communicator: one allocation per rank, whose
// address every rank can use. In one process (LocalPeerMemory) that is
// cudaMalloc on the rank's GPU plus peer access; with one process per GPU
// (ProcessPeerMemory, issue #14) each process allocates its rank's memory,
// shares it (a VMM file descriptor or a cudaIpc handle, through the
// bootstrap: runtime/bootstrap) and maps the peers' allocations. Nothing else
// in the runtime knows the difference, except that only a process's own ranks
// are initialized by it.
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
  virtual bool barrier(std::string &error) {
    (void)error;
    return true;
  }
  /// Whether every process says `what` (one process: yes); `error` names a
  /// rank that says something else, and what.
  virtual bool agree(const std::string &what, std::string &error) {
    (void)what, (void)error;
    return true;
  }
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

/// One rank per process (issue #14): this process is rank boot->rank(),
/// on `device`. allocate(), release() (with cudaIpc), registerBuffer() and
/// deregister() are collective over the processes: every one calls them in
/// the same order with the same sizes. With `vmm`, memory is cuMemCreate's
/// with POSIX file-descriptor handles, passed to the peers over `fds`
/// (FdChannel, SCM_RIGHTS) and mapped with cuMemMap; without, cudaMalloc's
/// shared by cudaIpc handles. NVLink multicast is never used.
/// ProcessMemory.cpp.
class Bootstrap;
class FdChannel;
class ProcessPeerMemory : public PeerMemory {
public:
  struct Setup {
    std::shared_ptr<Bootstrap> boot;
    std::shared_ptr<FdChannel> fds;
    std::vector<std::string> fdNames; // every rank's channel
    int device = 0;
    bool vmm = false;
    int64_t timeoutMs = 60000;
  };
  explicit ProcessPeerMemory(Setup s);
  ~ProcessPeerMemory() override;
  bool allocate(int64_t bytes, std::vector<void *> &out,
                std::string &error) override;
  void release(const std::vector<void *> &ptrs) override;
  bool barrier(std::string &error) override;
  bool agree(const std::string &what, std::string &error) override;
  /// Maps every rank's buffer [ptr, ptr + bytes) of memory it allocated
  /// itself (cudaMalloc: cudaIpc; cuMemCreate with POSIX fd handles: VMM):
  /// out[r] is rank r's ptr as this process sees it. Peer mappings are
  /// cached by the peer's allocation base (several buffers of one
  /// allocation map it once).
  bool registerBuffer(void *ptr, size_t bytes, std::vector<void *> &out,
                      std::string &error);
  void deregister(const std::vector<void *> &peers);
  bool usesVmm() const { return s_.vmm; }
  /// From now on release() waits for nobody (purlinCommAbort).
  void setAborted() { aborted_ = true; }

private:
  struct Mapping {
    uint64_t va = 0;     // this process's address of the mapping
    size_t size = 0;     // mapped bytes
    uint64_t handle = 0; // VMM: the allocation handle
    bool ipc = false;    // cudaIpcOpenMemHandle's (else VMM)
    bool own = false;    // this rank's allocation (else a peer's)
    int refs = 1;
    int peer = -1; // a peer's: its rank and allocation base there
    uint64_t peerBase = 0;
  };
  /// Every rank's outcome of a collective step: `why` (empty: it went
  /// well) becomes the first failure any rank reports, or the exchange's.
  void shareOutcome(std::string &why);
  bool allocVmm(int64_t bytes, std::vector<void *> &out, std::string &error);
  bool allocIpc(int64_t bytes, std::vector<void *> &out, std::string &error);
  bool mapHandle(uint64_t handle, size_t size, uint64_t &va,
                 std::string &error);
  bool mapVmmFd(int fd, size_t size, uint64_t &va, uint64_t &handle,
                std::string &error);
  void unmap(uint64_t va);
  Setup s_;
  bool aborted_ = false;
  uint64_t tag_ = 0;
  std::vector<Mapping> maps_;
};

} // namespace rt
} // namespace purlin
