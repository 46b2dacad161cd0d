// File descriptors between the processes of one host (issue #14): CUDA VMM
// allocations are shared as POSIX file descriptors (cuMemExportToShareable-
// Handle), which only the kernel can carry from one process to another: a
// Unix-domain socket message with SCM_RIGHTS, as PyTorch's SymmetricMemory
// does. CUDA-free (unit-tested: test/unit/unit_bootstrap.cpp).
//
// Every rank listens on an abstract-namespace socket (no file to clean up)
// whose name it publishes through the bootstrap (name()); exchange() sends
// this rank's fd to every peer (a connection each: a connect completes in
// the listener's backlog, so no rank waits for another to accept first) and
// accepts one fd from each. Messages carry (rank, tag): a message of a later
// exchange is kept until its exchange asks for it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace purlin {
namespace rt {

class FdChannel {
public:
  FdChannel() = default;
  FdChannel(const FdChannel &) = delete;
  FdChannel &operator=(const FdChannel &) = delete;
  ~FdChannel();
  /// Listens on "\0purlin-fd-<pid>-<salt>-<rank>". False with `error`.
  bool open(int rank, uint64_t salt, std::string &error);
  /// The socket's name, to publish to the peers.
  const std::string &name() const { return name_; }
  /// Sends `fd` (kept open here) to the channel named `peer`, as rank
  /// `rank` with `tag`.
  bool send(const std::string &peer, uint64_t tag, int fd, std::string &error);
  /// Receives the fd that rank `from` sent with `tag` (the caller owns it),
  /// waiting at most timeoutMs.
  bool receive(int from, uint64_t tag, int64_t timeoutMs, int &fd,
               std::string &error);
  /// send() to every name of `peers` but this rank's, then receive() from
  /// each: out[r] (out[rank] = -1). Closes what it received on failure.
  bool exchange(const std::vector<std::string> &peers, uint64_t tag, int fd,
                int64_t timeoutMs, std::vector<int> &out, std::string &error);
  void close();

private:
  int listen_ = -1, rank_ = -1;
  std::string name_;
  std::map<std::pair<int, uint64_t>, int> early_; // received, not asked yet
};

} // namespace rt
} // namespace purlin
