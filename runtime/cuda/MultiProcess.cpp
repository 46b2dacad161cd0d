// One process per GPU (purlinCommInitRank, issue #14): the processes meet
// through a bootstrap (runtime/bootstrap: a unique id over TCP, or the
// application's callbacks), agree on the job's shape and on how memory is
// shared (VMM fds when every GPU has them, else cudaIpc), and share their
// memory through ProcessPeerMemory; buffers are symmetric (purlinMemAlloc)
// or registered (Register.cpp): a launch passes this rank's, and a peer's
// address is that allocation's peer mapping plus the same offset.
#include "Bootstrap.h"
#include "Driver.h"
#include "FdPassing.h"
#include "Internal.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sys/random.h>
#include <unistd.h>

using namespace purlin;
using namespace purlin::rt;

void rt::closeProcessComm(purlinComm &c, bool abort) {
  auto *pm = static_cast<ProcessPeerMemory *>(c.mem.get());
  if (abort) {
    pm->setAborted();
    c.boot->abort(); // peers blocked in an exchange fail now
  }
  freeGraphSlots(c);
  if (!c.staging.empty())
    pm->release(c.staging);
  c.staging.clear();
  for (auto &a : c.sym) // allocations the application did not free
    if (a.registered)
      pm->deregister(a.peers);
    else
      pm->release(a.peers);
  c.sym.clear();
  c.mem.reset(); // unmaps what is left
  c.fds.reset();
  c.boot.reset();
}

/// Whether `stream` is being captured into a CUDA graph (asked only when a
/// launch's buffer is not registered: eager launches never ask).
static bool capturing(void *stream) {
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing((cudaStream_t)stream, &cs) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return cs == cudaStreamCaptureStatusActive;
}

purlinStatus rt::symmetricBuffers(const purlinColl *c, const purlinArgs *a,
                                  const exec::Shared &S,
                                  std::vector<void *> &out,
                                  std::vector<int> &missed,
                                  std::vector<StagedBuffer> &staged) {
  const purlinComm *comm = c->comm;
  const Collective &d = c->desc;
  const int nb = (int)d.buffers.size(), R = comm->R;
  out.assign((size_t)R * nb, nullptr);
  missed.clear();
  staged.clear();
  int64_t stagedBytes = 0;
  int captured = -1; // not asked yet
  for (int i = 0; i < nb; ++i) {
    char *p = (char *)a->buffers[i];
    if (!p)
      continue; // checked with the buffer's size, as every rank's
    const purlinComm::SymAlloc *hit = nullptr;
    for (auto &sa : comm->sym)
      if (p >= sa.base && p < sa.base + sa.bytes)
        hit = &sa;
    if (!hit) {
      if (captured < 0)
        captured = capturing(a->streams ? a->streams[0] : nullptr);
      if (!captured) {
        // Eager: through the staging area, at the next 256-byte boundary.
        const int64_t bytes = c->lastElems[i] * bufElemSize(S, i);
        if (bytes == 0) { // never accessed
          for (int r = 0; r < R; ++r)
            out[(size_t)r * nb + i] = p;
          continue;
        }
        const int64_t off = (stagedBytes + 255) & ~(int64_t)255;
        stagedBytes = off + bytes;
        if (stagedBytes > (int64_t)comm->stagingBytes)
          return fail(
              PURLIN_ERR_NOT_REGISTERED,
              "buffer '" + d.buffers[i].name +
                  "' is neither purlinMemAlloc memory nor registered "
                  "(purlinCommRegister), and this launch's such buffers "
                  "need more than the staging area's " +
                  std::to_string(comm->stagingBytes) +
                  " bytes (PURLIN_STAGING_BYTES): register them (a launch "
                  "being captured into a CUDA graph may use them: then call "
                  "purlinCommRegisterGraphBuffers after the capture)");
        staged.push_back({i, off, bytes});
        for (int r = 0; r < R; ++r)
          out[(size_t)r * nb + i] = (char *)comm->staging[r] + off;
        continue;
      }
      // Captured: every rank's entry is this rank's pointer until the
      // buffers are registered after the capture (a buffer of 0 bytes is
      // never accessed: nothing to record).
      for (int r = 0; r < R; ++r)
        out[(size_t)r * nb + i] = p;
      if (c->lastElems[i] > 0)
        missed.push_back(i);
      continue;
    }
    if ((int64_t)(hit->base + hit->bytes - p) < c->lastElems[i] * bufElemSize(S, i))
      return fail(PURLIN_ERR_INVALID_ARGUMENT,
                  "buffer '" + d.buffers[i].name +
                      "' runs past the end of its " +
                      (hit->registered ? "registered buffer"
                                       : "purlinMemAlloc allocation"));
    for (int r = 0; r < R; ++r)
      out[(size_t)r * nb + i] = (char *)hit->peers[r] + (p - hit->base);
  }
  return PURLIN_SUCCESS;
}

purlinStatus rt::copyStaged(const purlinColl *c, const purlinArgs *a,
                            const std::vector<StagedBuffer> &staged, bool in,
                            void *stream) {
  const purlinComm *comm = c->comm;
  for (const StagedBuffer &b : staged) {
    if (!in && c->desc.buffers[b.buf].role != BufferRole::Out)
      continue;
    char *user = (char *)a->buffers[b.buf];
    char *area = (char *)comm->staging[comm->rank] + b.off;
    cudaError_t e = cudaMemcpyAsync(in ? area : user, in ? user : area,
                                    (size_t)b.bytes, cudaMemcpyDeviceToDevice,
                                    (cudaStream_t)stream);
    if (e != cudaSuccess)
      return cudaFail(e, std::string("copying buffer '") +
                             c->desc.buffers[b.buf].name + "' " +
                             (in ? "into" : "out of") + " the staging area");
  }
  return PURLIN_SUCCESS;
}

namespace {
/// What every process says of itself at the start.
struct Hello {
  int32_t nranks, device;
  uint32_t vmm; // VMM with POSIX fd handles on this GPU (or forced)
  uint32_t pad;
  uint64_t host; // a hash of the host name: one host only
  uint64_t staging; // the staging area it asks for (PURLIN_STAGING_BYTES)
  char fdName[80];
};

uint64_t hostHash() {
  char name[256] = {0};
  gethostname(name, sizeof name - 1);
  return std::hash<std::string>()(name);
}

/// The communicator over `boot`: checks, the device, the agreement, the
/// fd channel and the peer memory.
purlinStatus initProcessComm(purlinComm_t *out, std::shared_ptr<Bootstrap> boot,
                             int device, const char *who) {
  const int nranks = boot->size(), rank = boot->rank();
  const std::string w = std::string(who) + ": ";
  int ndev = 0;
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev < 1) {
    cudaGetLastError();
    boot->abort();
    return fail(PURLIN_ERR_NO_DEVICE,
                w + "no CUDA GPU: " + cudaGetErrorString(e));
  }
  if (device < 0)
    device = rank % ndev;
  if (device >= ndev) {
    boot->abort();
    return fail(PURLIN_ERR_NO_DEVICE, w + "rank " + std::to_string(rank) +
                                          " on GPU " + std::to_string(device) +
                                          ", but there are " +
                                          std::to_string(ndev));
  }
  DeviceGuard guard;
  e = cudaSetDevice(device);
  if (e == cudaSuccess)
    e = cudaFree(nullptr); // the context, before any driver call
  if (e != cudaSuccess) {
    boot->abort();
    return cudaFail(e, w + "selecting GPU " + std::to_string(device));
  }
  auto c = std::make_unique<purlinComm>();
  c->R = nranks;
  c->rank = rank;
  c->multiProcess = true;
  c->rankDevice.assign(nranks, -1); // other processes' GPUs are theirs
  c->rankDevice[rank] = device;
  c->devices = {device};
  c->first = {rank};
  c->count = {1};
  c->boot = boot;
  c->fds = std::make_shared<FdChannel>();
  std::string err;
  uint64_t salt = 0;
  if (getrandom(&salt, sizeof salt, 0) != (ssize_t)sizeof salt)
    salt = (uint64_t)(uintptr_t)c.get();
  Hello h{};
  h.nranks = nranks;
  h.device = device;
  const char *force = std::getenv("PURLIN_MP_MEMORY");
  std::string mode = force ? force : "";
  h.vmm = mode == "ipc" ? 0 : (mode == "vmm" || vmmSupported(device));
  h.host = hostHash();
  h.staging = kDefaultStagingBytes;
  if (const char *e = std::getenv("PURLIN_STAGING_BYTES"))
    h.staging = std::strtoull(e, nullptr, 10);
  // The smallest any rank asks for: every rank's offsets must fit every
  // rank's area.
  c->stagingBytes = (size_t)h.staging;
  bool open = c->fds->open(rank, salt, err);
  std::snprintf(h.fdName, sizeof h.fdName, "%s", c->fds->name().c_str());
  // Everyone exchanges even after a local failure, so peers learn of it.
  std::vector<std::string> all;
  if (!boot->allGather(std::string((const char *)&h, sizeof h), all, err))
    return fail(PURLIN_ERR_BOOTSTRAP, w + err);
  if (!open) {
    boot->abort();
    return fail(PURLIN_ERR_BOOTSTRAP, w + err);
  }
  ProcessPeerMemory::Setup s;
  s.boot = boot;
  s.fds = c->fds;
  s.device = device;
  s.vmm = true;
  s.timeoutMs = bootstrapTimeoutMs();
  for (int r = 0; r < nranks; ++r) {
    Hello p;
    if (all[r].size() != sizeof p) {
      boot->abort();
      return fail(PURLIN_ERR_BOOTSTRAP,
                  w + "rank " + std::to_string(r) + " sent a malformed hello");
    }
    std::memcpy(&p, all[r].data(), sizeof p);
    if (p.nranks != nranks) {
      boot->abort();
      return fail(PURLIN_ERR_BAD_RANK_COUNT,
                  w + "rank " + std::to_string(r) + " says the job has " +
                      std::to_string(p.nranks) + " ranks, this one " +
                      std::to_string(nranks));
    }
    if (p.host != h.host) {
      boot->abort();
      return fail(PURLIN_ERR_BOOTSTRAP,
                  w + "rank " + std::to_string(r) +
                      " runs on another host; a communicator's processes "
                      "share one host");
    }
    s.fdNames.push_back(p.fdName);
    s.vmm = s.vmm && p.vmm;
    c->stagingBytes = std::min(c->stagingBytes, (size_t)p.staging);
  }
  if (mode == "vmm" && !vmmSupported(device)) {
    boot->abort();
    return fail(PURLIN_ERR_CUDA, w + "PURLIN_MP_MEMORY=vmm, but GPU " +
                                     std::to_string(device) +
                                     " has no VMM with POSIX fd handles");
  }
  if (purlinStatus st = initErrorWord(*c)) {
    boot->abort();
    return st;
  }
  c->mem = std::make_unique<ProcessPeerMemory>(std::move(s));
  // The staging area (collective: every rank agreed on its size above).
  if (c->stagingBytes > 0) {
    std::string err;
    if (!c->mem->allocate((int64_t)c->stagingBytes, c->staging, err)) {
      boot->abort();
      return fail(PURLIN_ERR_OUT_OF_MEMORY,
                  w + "the staging area (PURLIN_STAGING_BYTES=" +
                      std::to_string(c->stagingBytes) + "): " + err);
    }
  }
  *out = c.release();
  return ok();
}

purlinStatus checkRanks(int nranks, int rank, const char *who) {
  if (nranks < 1 || nranks > exec::kMaxRanks)
    return fail(PURLIN_ERR_BAD_RANK_COUNT,
                std::string(who) + ": " + std::to_string(nranks) +
                    " ranks; 1 to " + std::to_string(exec::kMaxRanks) +
                    " supported");
  if (rank < 0 || rank >= nranks)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, std::string(who) + ": rank " +
                                                 std::to_string(rank) + " of " +
                                                 std::to_string(nranks));
  return PURLIN_SUCCESS;
}
} // namespace

extern "C" {

purlinStatus purlinGetUniqueId(purlinUniqueId *id) {
  if (!id)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinGetUniqueId: null id");
  std::string err;
  if (!makeUniqueId(id->internal, err))
    return fail(PURLIN_ERR_BOOTSTRAP, err);
  return ok();
}

purlinStatus purlinCommInitRank(purlinComm_t *out, int nranks,
                                purlinUniqueId id, int rank, int device) {
  if (!out)
    return fail(PURLIN_ERR_INVALID_ARGUMENT,
                "purlinCommInitRank: null argument");
  *out = nullptr;
  if (purlinStatus st = checkRanks(nranks, rank, "purlinCommInitRank"))
    return st;
  std::string err;
  std::shared_ptr<Bootstrap> boot =
      connectTcp(id.internal, rank, nranks, bootstrapTimeoutMs(), err);
  if (!boot)
    return fail(uniqueIdNonce(id.internal) ? PURLIN_ERR_BOOTSTRAP
                                           : PURLIN_ERR_INVALID_ARGUMENT,
                "purlinCommInitRank: " + err);
  return initProcessComm(out, boot, device, "purlinCommInitRank");
}

purlinStatus purlinCommInitRankCallbacks(purlinComm_t *out, int nranks,
                                         int rank, int device,
                                         const purlinBootstrapCallbacks *cb) {
  if (!out || !cb)
    return fail(PURLIN_ERR_INVALID_ARGUMENT,
                "purlinCommInitRankCallbacks: null argument");
  *out = nullptr;
  if (purlinStatus st = checkRanks(nranks, rank, "purlinCommInitRankCallbacks"))
    return st;
  BootstrapCallbacks b{cb->allgather, cb->barrier, cb->ctx};
  std::string err;
  std::shared_ptr<Bootstrap> boot = fromCallbacks(b, rank, nranks, err);
  if (!boot)
    return fail(PURLIN_ERR_INVALID_ARGUMENT,
                "purlinCommInitRankCallbacks: " + err);
  return initProcessComm(out, boot, device, "purlinCommInitRankCallbacks");
}

purlinStatus purlinCommSplit(purlinComm_t c, int color, int key,
                             purlinComm_t *sub) {
  if (!c || !sub)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinCommSplit: null argument");
  *sub = nullptr;
  if (!c->multiProcess)
    return fail(PURLIN_ERR_INVALID_ARGUMENT,
                "purlinCommSplit: only for multi-process communicators");
  if (color < 0 && color != PURLIN_SPLIT_NOCOLOR)
    return fail(PURLIN_ERR_INVALID_ARGUMENT,
                "purlinCommSplit: color " + std::to_string(color) +
                    " (a color is >= 0, or PURLIN_SPLIT_NOCOLOR)");
  // Who is in my group, in (key, rank) order.
  int32_t mine[2] = {color, key};
  std::vector<std::string> all;
  std::string err;
  if (!c->boot->allGather(std::string((const char *)mine, sizeof mine), all,
                          err))
    return fail(PURLIN_ERR_BOOTSTRAP, "purlinCommSplit: " + err);
  std::vector<int> colors(c->R), keys(c->R);
  for (int r = 0; r < c->R; ++r) {
    int32_t ck[2];
    std::memcpy(ck, all[r].data(), sizeof ck);
    colors[r] = ck[0];
    keys[r] = ck[1];
  }
  int newRank = -1;
  const std::vector<int> group = splitGroup(colors, keys, c->rank, newRank);
  // The group's first rank makes its id; everyone learns its leader's.
  purlinUniqueId id{};
  bool made = true;
  if (newRank == 0)
    made = makeUniqueId(id.internal, err);
  std::string blob = newRank == 0 && made
                         ? std::string(id.internal, sizeof id.internal)
                         : std::string();
  if (!c->boot->allGather(blob, all, err))
    return fail(PURLIN_ERR_BOOTSTRAP, "purlinCommSplit: " + err);
  if (!made)
    return fail(PURLIN_ERR_BOOTSTRAP, "purlinCommSplit: " + err);
  if (newRank < 0)
    return ok(); // PURLIN_SPLIT_NOCOLOR
  const std::string &leader = all[group[0]];
  if (leader.size() != sizeof id.internal)
    return fail(PURLIN_ERR_BOOTSTRAP, "purlinCommSplit: rank " +
                                          std::to_string(group[0]) +
                                          " could not make its group's id");
  std::memcpy(id.internal, leader.data(), sizeof id.internal);
  std::shared_ptr<Bootstrap> boot = connectTcp(
      id.internal, newRank, (int)group.size(), bootstrapTimeoutMs(), err);
  if (!boot)
    return fail(PURLIN_ERR_BOOTSTRAP, "purlinCommSplit: " + err);
  purlinStatus st =
      initProcessComm(sub, boot, c->devices[0], "purlinCommSplit");
  if (st == PURLIN_SUCCESS)
    (*sub)->timeoutNs = c->timeoutNs;
  return st;
}

purlinStatus purlinCommAbort(purlinComm_t c) {
  if (!c)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "null communicator");
  if (c->multiProcess)
    closeProcessComm(*c, true);
  if (c->errHost)
    cudaFreeHost(c->errHost);
  delete c;
  return ok();
}

purlinStatus purlinMemAlloc(purlinComm_t c, size_t bytes, void **ptr) {
  if (!c || !ptr)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinMemAlloc: null argument");
  *ptr = nullptr;
  if (!c->multiProcess)
    return fail(
        PURLIN_ERR_INVALID_ARGUMENT,
        "purlinMemAlloc: only for multi-process communicators (one process's "
        "ranks take any device memory)");
  std::vector<void *> peers;
  std::string err;
  DeviceGuard guard;
  if (!c->mem->allocate((int64_t)bytes, peers, err))
    return fail(c->boot->broken() ? PURLIN_ERR_BOOTSTRAP
                                  : PURLIN_ERR_OUT_OF_MEMORY,
                "purlinMemAlloc: " + err);
  c->sym.push_back({(char *)peers[c->rank], bytes > 0 ? bytes : 16, peers});
  *ptr = peers[c->rank];
  return ok();
}

purlinStatus purlinMemFree(purlinComm_t c, void *ptr) {
  if (!c || !c->multiProcess)
    return fail(PURLIN_ERR_INVALID_ARGUMENT,
                "purlinMemFree: not a multi-process communicator");
  for (size_t i = 0; i < c->sym.size(); ++i)
    if (!c->sym[i].registered && c->sym[i].base == ptr) {
      DeviceGuard guard;
      c->mem->release(c->sym[i].peers);
      c->sym.erase(c->sym.begin() + i);
      return ok();
    }
  return fail(PURLIN_ERR_INVALID_ARGUMENT,
              "purlinMemFree: not from purlinMemAlloc");
}

} // extern "C"
