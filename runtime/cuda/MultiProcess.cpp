// One process per GPU (purlinCommCreateRank): the processes meet through
// the bootstrap (runtime/bootstrap), agree on the job's shape and share
// cudaIpc handles of their memory (IpcPeerMemory); buffers are symmetric
// (purlinMemAlloc): a launch passes this rank's, and a peer's address is
// its allocation's base plus the same offset.
#include "Bootstrap.h"
#include "Internal.h"

using namespace purlin;
using namespace purlin::rt;

bool rt::closeBootstrap(purlinComm &c, std::string &error) {
  return c.boot->close(error);
}

purlinStatus rt::symmetricBuffers(const purlinColl *c, const purlinArgs *a,
                                  int elemSize, std::vector<void *> &out) {
  const purlinComm *comm = c->comm;
  const Collective &d = c->desc;
  const int nb = (int)d.buffers.size(), R = comm->R;
  out.assign((size_t)R * nb, nullptr);
  for (int i = 0; i < nb; ++i) {
    char *p = (char *)a->buffers[i];
    if (!p)
      continue; // checked with the buffer's size, as every rank's
    const purlinComm::SymAlloc *hit = nullptr;
    for (auto &sa : comm->sym)
      if (p >= sa.base && p < sa.base + sa.bytes)
        hit = &sa;
    if (!hit)
      return fail(PURLIN_ERR_INVALID_ARGUMENT,
                  "buffer '" + d.buffers[i].name +
                      "' is not in memory of purlinMemAlloc (a multi-process "
                      "communicator needs symmetric buffers)");
    if ((int64_t)(hit->base + hit->bytes - p) < c->lastElems[i] * elemSize)
      return fail(PURLIN_ERR_INVALID_ARGUMENT,
                  "buffer '" + d.buffers[i].name +
                      "' runs past the end of its purlinMemAlloc allocation");
    for (int r = 0; r < R; ++r)
      out[(size_t)r * nb + i] = (char *)hit->peers[r] + (p - hit->base);
  }
  return PURLIN_SUCCESS;
}

extern "C" {

purlinStatus purlinCommCreateRank(purlinComm_t *out, int nranks, int rank,
                                  int device, const char *bootstrapDir) {
  if (!out)
    return fail(PURLIN_ERR_INVALID_ARGUMENT,
                "purlinCommCreateRank: null argument");
  *out = nullptr;
  std::string dir = bootstrapDir ? bootstrapDir : "", err;
  int64_t timeoutMs = 60000;
  if (!Bootstrap::fromEnvironment(rank, nranks, dir, timeoutMs, err))
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinCommCreateRank: " + err);
  if (nranks < 1 || nranks > exec::kMaxRanks)
    return fail(PURLIN_ERR_BAD_RANK_COUNT,
                "purlinCommCreateRank: " + std::to_string(nranks) +
                    " ranks; 1 to " + std::to_string(exec::kMaxRanks) +
                    " supported");
  if (rank < 0 || rank >= nranks)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinCommCreateRank: rank " +
                                                 std::to_string(rank) + " of " +
                                                 std::to_string(nranks));
  int ndev = 0;
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev < 1) {
    cudaGetLastError();
    return fail(PURLIN_ERR_NO_DEVICE,
                std::string("no CUDA GPU: ") + cudaGetErrorString(e));
  }
  if (device < 0)
    device = rank % ndev;
  if (device >= ndev)
    return fail(PURLIN_ERR_NO_DEVICE, "rank " + std::to_string(rank) +
                                          " on GPU " + std::to_string(device) +
                                          ", but there are " +
                                          std::to_string(ndev));
  auto c = std::make_unique<purlinComm>();
  c->R = nranks;
  c->rank = rank;
  c->multiProcess = true;
  c->rankDevice.assign(nranks, -1); // other processes' GPUs are theirs
  c->rankDevice[rank] = device;
  c->devices = {device};
  c->first = {rank};
  c->count = {1};
  c->boot = std::make_shared<Bootstrap>(dir, rank, nranks, timeoutMs);
  if (!c->boot->init(err))
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinCommCreateRank: " + err);
  // Agree on the job's shape: every process must name the same R.
  std::vector<std::string> all;
  std::string mine = std::to_string(nranks) + " " + std::to_string(device);
  if (!c->boot->allGather(mine, all, err))
    return fail(PURLIN_ERR_TIMEOUT, "purlinCommCreateRank: " + err);
  for (int r = 0; r < nranks; ++r)
    if (all[r].substr(0, all[r].find(' ')) != std::to_string(nranks))
      return fail(PURLIN_ERR_BAD_RANK_COUNT,
                  "purlinCommCreateRank: rank " + std::to_string(r) +
                      " says the job has " +
                      all[r].substr(0, all[r].find(' ')) + " ranks, this one " +
                      std::to_string(nranks));
  DeviceGuard guard;
  e = cudaSetDevice(device);
  if (e != cudaSuccess)
    return cudaFail(e, "selecting GPU " + std::to_string(device));
  if (purlinStatus st = initErrorWord(*c))
    return st;
  c->mem = std::make_unique<IpcPeerMemory>(c->boot, device);
  *out = c.release();
  return ok();
}

purlinStatus purlinMemAlloc(purlinComm_t c, size_t bytes, void **ptr) {
  if (!c || !ptr)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinMemAlloc: null argument");
  *ptr = nullptr;
  if (!c->multiProcess)
    return fail(
        PURLIN_ERR_INVALID_ARGUMENT,
        "purlinMemAlloc: only for communicators of purlinCommCreateRank "
        "(one process's ranks take any device memory)");
  std::vector<void *> peers;
  std::string err;
  DeviceGuard guard;
  if (!c->mem->allocate((int64_t)bytes, peers, err))
    return fail(PURLIN_ERR_OUT_OF_MEMORY, "purlinMemAlloc: " + err);
  c->sym.push_back({(char *)peers[c->rank], bytes > 0 ? bytes : 16, peers});
  *ptr = peers[c->rank];
  return ok();
}

purlinStatus purlinMemFree(purlinComm_t c, void *ptr) {
  if (!c || !c->multiProcess)
    return fail(PURLIN_ERR_INVALID_ARGUMENT,
                "purlinMemFree: not a multi-process communicator");
  for (size_t i = 0; i < c->sym.size(); ++i)
    if (c->sym[i].base == ptr) {
      DeviceGuard guard;
      c->mem->release(c->sym[i].peers);
      c->sym.erase(c->sym.begin() + i);
      return ok();
    }
  return fail(PURLIN_ERR_INVALID_ARGUMENT,
              "purlinMemFree: not from purlinMemAlloc");
}

} // extern "C"
