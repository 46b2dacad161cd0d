// Bootstrap of a communicator whose ranks are separate processes on one host
// (issue #5): an all-gather of byte blobs among R processes, through a
// shared directory. CUDA-free (unit-tested on the CPU:
// test/unit/unit_bootstrap.cpp); the CUDA runtime exchanges cudaIpc handles
// with it (runtime/cuda/PeerMemory.cpp, IpcPeerMemory).
//
// Protocol: round k of rank r writes DIR/k.r (to DIR/.k.r.tmp, then
// rename, so a reader never sees half a file) and polls until DIR/k.0 ..
// DIR/k.(R-1) all exist or the timeout passes. Ranks enter round k+1 only
// after reading all of round k, so a rank that has seen every file of round
// k deletes its own file of round k-1. close() ends with a last round and a
// "left.r" file per rank; the rank that sees all R of them removes what is
// left (and the directory, if a rank's init created it). One fresh
// directory per job: every rank names the same one, and it must not hold
// another job's files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace purlin {
namespace rt {

class Bootstrap {
public:
  /// `dir` must exist (or be creatable) and be shared by all R ranks.
  /// timeoutMs: how long one exchange waits for the slowest peer.
  Bootstrap(std::string dir, int rank, int nranks, int64_t timeoutMs);
  ~Bootstrap();
  /// Checks the arguments and creates `dir` when missing. False with error.
  bool init(std::string &error);
  int rank() const { return rank_; }
  int size() const { return nranks_; }
  /// Every rank contributes `mine`; out[r] is rank r's blob. Collective:
  /// every rank calls it the same number of times, in the same order.
  /// False with `error` on a timeout or an I/O error (the bootstrap is then
  /// unusable).
  bool allGather(const std::string &mine, std::vector<std::string> &out,
                 std::string &error);
  bool barrier(std::string &error);
  /// A last exchange, then removes this rank's files. Idempotent; the
  /// destructor calls it (ignoring errors).
  bool close(std::string &error);

  /// Reads rank, size and directory from the environment where the
  /// arguments leave them open (rank < 0, nranks < 0, dir null or empty):
  /// PURLIN_RANK, PURLIN_NRANKS, PURLIN_BOOTSTRAP_DIR (falling back to
  /// OMPI_COMM_WORLD_RANK/SIZE, then SLURM_PROCID/NTASKS, for the first
  /// two). Timeout: PURLIN_BOOTSTRAP_TIMEOUT_MS, default 60 s.
  static bool fromEnvironment(int &rank, int &nranks, std::string &dir,
                              int64_t &timeoutMs, std::string &error);

private:
  std::string path(int64_t round, int rank, bool tmp = false) const;
  std::string dir_;
  int rank_, nranks_;
  int64_t timeoutMs_;
  int64_t round_ = 0;
  bool broken_ = false, closed_ = false, createdDir_ = false;
};

} // namespace rt
} // namespace purlin
