// Bootstrap of a communicator whose ranks are separate processes (issue
// #14): an all-gather of byte blobs among R processes, and a barrier. Two
// kinds, as the ecosystem has them:
//  - TCP (TcpBootstrap.cpp), like ncclGetUniqueId/ncclCommInitRank: one
//    process makes a unique id (makeUniqueId: a listening socket, its
//    address, port and a random nonce), the application hands it to every
//    process, rank 0 (the process that made it) accepts the others and
//    relays every exchange (a star). Every wait is bounded by the timeout;
//    the error names the ranks that did not arrive or answer.
//  - callbacks (CallbackBootstrap.cpp): the application's own all-gather
//    (an MPI communicator, a torch.distributed store) and barrier.
// CUDA-free: unit-tested on the CPU with forked processes
// (test/unit/unit_bootstrap.cpp). The CUDA runtime exchanges its memory
// handles with it (runtime/cuda/PeerMemory.cpp) and file descriptors
// beside it (FdPassing.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace purlin {
namespace rt {

/// The size of a unique id (purlinUniqueId's bytes).
constexpr size_t kUniqueIdBytes = 128;

class Bootstrap {
public:
  virtual ~Bootstrap() = default;
  int rank() const { return rank_; }
  int size() const { return nranks_; }
  /// Every rank contributes `mine`; out[r] is rank r's blob. Collective:
  /// every rank calls it the same number of times, in the same order.
  /// False with `error` on a timeout, a peer gone or an I/O error (the
  /// bootstrap is then unusable: every later call fails at once).
  virtual bool allGather(const std::string &mine, std::vector<std::string> &out,
                         std::string &error) = 0;
  virtual bool barrier(std::string &error);
  /// Drops the connections without a last exchange, so that peers blocked
  /// in an exchange get an error at once (purlinCommAbort). Idempotent.
  virtual void abort() {}
  bool broken() const { return broken_; }

protected:
  Bootstrap(int rank, int nranks) : rank_(rank), nranks_(nranks) {}
  int rank_, nranks_;
  bool broken_ = false;
};

/// Makes a unique id: a listening TCP socket of this process (kept until a
/// connectTcp of rank 0 with this id takes it, or the process ends), its
/// address (PURLIN_BOOTSTRAP_ADDR, an IPv4 address of this host, default
/// 127.0.0.1) and port, and a random nonce. False with `error`.
bool makeUniqueId(char id[kUniqueIdBytes], std::string &error);
/// The id's nonce (0 for bytes that are no id), for names and messages.
uint64_t uniqueIdNonce(const char id[kUniqueIdBytes]);

/// Joins the job of `id` as `rank` of `nranks`; rank 0 must be the process
/// that made the id. Rank 0 waits at most `timeoutMs` for all ranks to
/// arrive and for each exchange's blobs, then tells every rank the outcome
/// (the error names the missing ranks); a rank > 0 waits at most twice that
/// for rank 0's answer (rank 0 may enter an exchange later), and learns at
/// once when rank 0's process is gone. Null with `error`.
std::unique_ptr<Bootstrap> connectTcp(const char id[kUniqueIdBytes], int rank,
                                      int nranks, int64_t timeoutMs,
                                      std::string &error);

/// The application's collectives: allgather(send, recv, bytes, ctx) puts
/// every rank's `bytes` bytes into recv[r * bytes ...] (as MPI_Allgather);
/// barrier(ctx) may be null (an all-gather of one byte then). Each returns
/// 0 on success; their timeouts are the application's.
struct BootstrapCallbacks {
  int (*allgather)(const void *send, void *recv, size_t bytes, void *ctx);
  int (*barrier)(void *ctx);
  void *ctx;
};
std::unique_ptr<Bootstrap> fromCallbacks(const BootstrapCallbacks &cb, int rank,
                                         int nranks, std::string &error);

/// ncclCommSplit's grouping: the ranks whose color is `colors[me]`, ordered
/// by key (ties by rank); empty when that color is negative (no color).
/// newRank: the position of `me` in it (-1 without a color).
std::vector<int> splitGroup(const std::vector<int> &colors,
                            const std::vector<int> &keys, int me, int &newRank);

/// PURLIN_BOOTSTRAP_TIMEOUT_MS, default 60000 (also when not a positive
/// number).
int64_t bootstrapTimeoutMs();

} // namespace rt
} // namespace purlin
