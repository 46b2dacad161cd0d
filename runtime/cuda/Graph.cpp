// CUDA graphs whose buffers are registered after the capture (vLLM's
// register_graph_buffers; docs/multiprocess.md, "CUDA graphs"). A frame-
// work allocates a graph's tensors from its private pool during the
// capture, so a multi-process launch being captured may name a buffer that
// no peer has mapped yet. Such a launch is not refused: its buffers are
// recorded, in capture order, and the kernel captured reads its shared
// state (exec::Shared: every rank's buffer addresses) from a slot of device
// memory instead of its parameters. The slot holds this rank's own
// addresses and is not ready: a replay then does nothing and reports
// PURLIN_ERR_NOT_REGISTERED (purlinCommCheck). purlinCommRegisterGraphBuffers
// (collective) registers the recorded buffers as purlinCommRegister does,
// writes the peers' addresses into the slots and marks them ready.
//
// Slots come from a pool per communicator (chunks of kSlotsPerChunk), one
// per captured launch, never reused (the graph may be replayed any time),
// freed with the communicator. They are written on a stream of their own,
// with this thread's capture mode relaxed, so that writing one during a
// capture does not touch the stream being captured.
#include "Bootstrap.h"
#include "Internal.h"

#include <cstring>

using namespace purlin;
using namespace purlin::rt;

namespace {
constexpr int kSlotsPerChunk = 64;

/// Runs `f` with this thread's stream-capture mode relaxed (what NCCL does
/// around its allocations): allocations and copies on another stream are
/// then allowed while this thread captures.
template <class F> cudaError_t relaxed(F f) {
  cudaStreamCaptureMode m = cudaStreamCaptureModeRelaxed;
  cudaThreadExchangeStreamCaptureMode(&m);
  cudaError_t e = f();
  cudaThreadExchangeStreamCaptureMode(&m);
  return e;
}

void *slotAddress(const purlinComm::GraphSlots &g, int index) {
  return (char *)g.chunks[(size_t)index / kSlotsPerChunk] +
         (size_t)(index % kSlotsPerChunk) * g.slotBytes;
}

/// Writes slot `index`: `S`, ready or not; waits for the copy.
cudaError_t writeSlot(purlinComm &c, const RuntimeTarget &dp, int index,
                      const exec::Shared &S, bool ready) {
  purlinComm::GraphSlots &g = c.graph;
  std::vector<char> image(g.slotBytes, 0);
  dp.slotImage(S, ready, image.data());
  return relaxed([&] {
    cudaError_t e =
        cudaMemcpyAsync(slotAddress(g, index), image.data(), image.size(),
                        cudaMemcpyHostToDevice, g.stream);
    return e == cudaSuccess ? cudaStreamSynchronize(g.stream) : e;
  });
}

/// A new slot's index, or -1 with `msg`.
int newSlot(purlinComm &c, const RuntimeTarget &dp, std::string &msg) {
  purlinComm::GraphSlots &g = c.graph;
  if (!g.slotBytes)
    g.slotBytes = (dp.slotBytes() + 255) / 256 * 256;
  cudaError_t e = relaxed([&] {
    cudaError_t r = cudaSuccess;
    if (!g.stream)
      r = cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking);
    if (r == cudaSuccess &&
        (size_t)g.used == g.chunks.size() * kSlotsPerChunk) {
      void *p = nullptr;
      r = cudaMalloc(&p, g.slotBytes * kSlotsPerChunk);
      if (r == cudaSuccess)
        g.chunks.push_back(p);
    }
    return r;
  });
  if (e != cudaSuccess) {
    cudaGetLastError();
    msg = std::string("allocating a launch slot for a buffer registered "
                      "after the capture: ") +
          cudaGetErrorString(e);
    return -1;
  }
  return g.used++;
}

/// What a rank says of its recorded buffers: for each, its bytes and the
/// earlier recorded buffer that contains it (-1: none) at which offset.
struct Entry {
  uint64_t bytes;
  int64_t ref;
  uint64_t offset;
};
} // namespace

purlinStatus rt::launchThroughSlot(purlinColl *c, int plan,
                                   const exec::Shared &S,
                                   const std::vector<int> &missed, int first,
                                   int n, int dtype, int op, void *stream,
                                   std::string &msg) {
  purlinComm &comm = *c->comm;
  const RuntimeTarget &dp = *c->datapath;
  if (!dp.slotBytes()) {
    msg = std::string("buffer '") + c->desc.buffers[missed[0]].name +
          "' is not registered, and the " + dp.name() +
          " datapath cannot register it after the capture: register it "
          "before (purlinCommRegister)";
    return PURLIN_ERR_NOT_REGISTERED;
  }
  const int index = newSlot(comm, dp, msg);
  if (index < 0)
    return PURLIN_ERR_CUDA;
  if (cudaError_t e = writeSlot(comm, dp, index, S, false)) {
    cudaGetLastError();
    msg = std::string("writing a launch slot: ") + cudaGetErrorString(e);
    return PURLIN_ERR_CUDA;
  }
  purlinStatus st =
      dp.launchSlot(*c->info, plan, S, slotAddress(comm.graph, index), first,
                    n, dtype, op, stream, msg);
  if (st != PURLIN_SUCCESS)
    return st; // the slot stays unused
  const int pending = (int)comm.graph.pending.size();
  comm.graph.pending.push_back({index, S});
  for (int i : missed)
    comm.graph.recorded.push_back(
        {(char *)S.buf[comm.rank][i],
         (size_t)(c->lastElems[i] * (int64_t)bufElemSize(S, i)), pending, i});
  return PURLIN_SUCCESS;
}

void rt::freeGraphSlots(purlinComm &c) {
  purlinComm::GraphSlots &g = c.graph;
  if (!g.chunks.empty() || g.stream) {
    DeviceGuard guard;
    cudaSetDevice(c.devices[0]);
    for (void *p : g.chunks)
      cudaFree(p);
    if (g.stream)
      cudaStreamDestroy(g.stream);
    cudaGetLastError();
  }
  g = purlinComm::GraphSlots();
}

extern "C" purlinStatus purlinCommRegisterGraphBuffers(purlinComm_t c) {
  const char *who = "purlinCommRegisterGraphBuffers: ";
  if (!c)
    return fail(PURLIN_ERR_INVALID_ARGUMENT,
                std::string(who) + "null communicator");
  if (!c->multiProcess)
    return ok(); // one process's ranks take any memory: nothing recorded
  purlinComm::GraphSlots &g = c->graph;
  const int R = c->R, me = c->rank;
  // Whatever happens, the list is dropped: a failed call leaves the
  // graphs captured since the last call unready (recapture them).
  std::vector<purlinComm::GraphSlots::Recorded> rec;
  std::vector<purlinComm::GraphSlots::Pending> pending;
  rec.swap(g.recorded);
  pending.swap(g.pending);
  const size_t n = rec.size();

  // 1. Every rank's list: the counts and sizes must agree.
  std::string mine(sizeof(uint64_t) + n * sizeof(Entry), '\0');
  const uint64_t n64 = n;
  std::memcpy(&mine[0], &n64, sizeof n64);
  for (size_t k = 0; k < n; ++k) {
    Entry e{rec[k].bytes, -1, 0};
    for (size_t j = 0; j < k && e.ref < 0; ++j)
      if (rec[k].ptr >= rec[j].ptr &&
          rec[k].ptr + rec[k].bytes <= rec[j].ptr + rec[j].bytes) {
        e.ref = (int64_t)j;
        e.offset = (uint64_t)(rec[k].ptr - rec[j].ptr);
      }
    std::memcpy(&mine[sizeof n64 + k * sizeof(Entry)], &e, sizeof e);
  }
  std::vector<std::string> all;
  std::string why;
  if (!c->boot->allGather(mine, all, why))
    return fail(PURLIN_ERR_BOOTSTRAP, who + why);
  std::vector<std::vector<Entry>> lists(R);
  bool sameCount = true;
  for (int r = 0; r < R; ++r) {
    uint64_t nr = 0;
    if (all[r].size() >= sizeof nr)
      std::memcpy(&nr, all[r].data(), sizeof nr);
    if (all[r].size() != sizeof nr + nr * sizeof(Entry))
      return fail(PURLIN_ERR_MISMATCH, who + std::string("rank ") +
                                           std::to_string(r) +
                                           " sent a malformed list");
    lists[r].resize(nr);
    if (nr)
      std::memcpy(lists[r].data(), all[r].data() + sizeof nr,
                  nr * sizeof(Entry));
    sameCount = sameCount && nr == lists[0].size();
  }
  if (!sameCount) {
    std::string counts;
    for (int r = 0; r < R; ++r)
      counts += (r ? ", rank " : "rank ") + std::to_string(r) + ": " +
                std::to_string(lists[r].size());
    return fail(PURLIN_ERR_MISMATCH,
                who + std::string("the ranks recorded different numbers of "
                                  "unregistered buffers in their captures (") +
                    counts +
                    "): every rank must capture the same launches on the "
                    "same kinds of buffers; recapture the graphs");
  }
  for (size_t k = 0; k < n; ++k)
    for (int r = 1; r < R; ++r)
      if (lists[r][k].bytes != lists[0][k].bytes)
        return fail(PURLIN_ERR_MISMATCH,
                    who + std::string("recorded buffer ") + std::to_string(k) +
                        " has " + std::to_string(lists[r][k].bytes) +
                        " bytes on rank " + std::to_string(r) + " and " +
                        std::to_string(lists[0][k].bytes) +
                        " on rank 0: every rank must capture the same "
                        "launches; recapture the graphs");

  // 2. Registration, in capture order. A buffer that every rank recorded
  // inside the same earlier one, at the same offset (an in-place launch's
  // output, the same tensor in two launches), takes that one's peers.
  auto *pm = static_cast<ProcessPeerMemory *>(c->mem.get());
  std::vector<std::vector<void *>> peers(n);
  const size_t symBefore = c->sym.size();
  for (size_t k = 0; k < n; ++k) {
    bool same = lists[0][k].ref >= 0;
    for (int r = 1; r < R && same; ++r)
      same = lists[r][k].ref == lists[0][k].ref &&
             lists[r][k].offset == lists[0][k].offset;
    if (same) {
      const std::vector<void *> &from = peers[(size_t)lists[0][k].ref];
      peers[k].resize(R);
      for (int r = 0; r < R; ++r)
        peers[k][r] = (char *)from[r] + lists[0][k].offset;
      continue;
    }
    std::string err;
    if (!pm->registerBuffer(rec[k].ptr, rec[k].bytes, peers[k], err)) {
      for (size_t i = symBefore; i < c->sym.size(); ++i)
        pm->deregister(c->sym[i].peers);
      c->sym.resize(symBefore);
      return fail(c->boot->broken() ? PURLIN_ERR_BOOTSTRAP
                                    : PURLIN_ERR_INVALID_ARGUMENT,
                  who + std::string("recorded buffer ") + std::to_string(k) +
                      ": " + err);
    }
    c->sym.push_back({rec[k].ptr, rec[k].bytes, peers[k], true});
  }

  // 3. The peers' addresses into the slots, which become ready. No replay
  // may be reading a slot while it is written.
  for (size_t k = 0; k < n; ++k)
    for (int r = 0; r < R; ++r)
      if (r != me)
        pending[(size_t)rec[k].pending].S.buf[r][rec[k].buffer] = peers[k][r];
  if (pending.empty())
    return ok();
  DeviceGuard guard;
  cudaSetDevice(c->devices[0]);
  cudaError_t e = cudaDeviceSynchronize();
  for (size_t i = 0; i < pending.size() && e == cudaSuccess; ++i)
    e = writeSlot(*c, *c->datapath, pending[i].index, pending[i].S, true);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return fail(PURLIN_ERR_CUDA, who + std::string("writing the slots: ") +
                                     cudaGetErrorString(e));
  }
  return ok();
}
