// What the files of the CUDA runtime share: the communicator and the
// collective instance behind the C API's handles, the last-error helpers
// and the device guard. Not installed; the C API is purlin/purlin.h.
//
//   Api.cpp           status strings, the last error, the handles' queries
//   Comm.cpp          communicators of one process, the error word
//   MultiProcess.cpp  one process per GPU: purlinCommInitRank(+Callbacks),
//                     purlinCommSplit, purlinCommAbort, symmetric memory
//                     (purlinMemAlloc) and its buffers at launch
//   ProcessMemory.cpp its peer memory: VMM fds or cudaIpc handles
//   Register.cpp      purlinCommRegister: the application's own buffers
//   Graph.cpp         CUDA graphs captured with buffers not registered
//                     yet: slots, purlinCommRegisterGraphBuffers
//   Driver.cpp        the driver entry points VMM needs
//   Coll.cpp          collective instances: checks, maxima, resources
//   Params.cpp        a launch's parameters: scalars, tables, buffer sizes
//   Launch.cpp        purlinLaunch: validation, plan choice, the datapath
//   Datapaths.cpp     the datapaths this runtime launches on (sm/)
#pragma once

#include "PeerMemory.h"
#include "purlin/purlin.h"
#include "purlin/runtime/BoundValues.h"
#include "purlin/runtime/Launch.h"
#include "purlin/runtime/Target.h"
#include "purlin/spec/Collective.h"
#include "purlin/spec/Exec.h"
#include "purlin/spec/Params.h"

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

namespace purlin {
namespace rt {
class Bootstrap;
class FdChannel;

/// Sets this thread's last error; returns `s`.
purlinStatus fail(purlinStatus s, const std::string &msg);
/// Clears it; returns PURLIN_SUCCESS.
purlinStatus ok();
/// PURLIN_ERR_CUDA with "what: <CUDA's message>"; clears a non-sticky error.
purlinStatus cudaFail(cudaError_t e, const std::string &what);

/// Restores the current device on scope exit.
struct DeviceGuard {
  int prev = 0;
  DeviceGuard() { cudaGetDevice(&prev); }
  ~DeviceGuard() { cudaSetDevice(prev); }
};

/// The datapaths of this runtime, registered once (Datapaths.cpp).
void registerDatapaths();
} // namespace rt
} // namespace purlin

struct purlinComm {
  int R = 0;
  std::vector<int> rankDevice;
  // Distinct GPUs in rank order; ranks [first[i], first[i] + count[i]).
  std::vector<int> devices, first, count;
  std::unique_ptr<purlin::rt::PeerMemory> mem;
  uint32_t *errHost = nullptr; // mapped host memory, written by the device
  uint32_t *errDev = nullptr;
  uint64_t timeoutNs = 0; // 0: the datapath's default
  // The datapath of its collectives (one per communicator: it reads the
  // error word).
  const purlin::rt::RuntimeTarget *datapath = nullptr;
  // One process per GPU (purlinCommInitRank): this process's rank, its
  // bootstrap and fd channel, and the symmetric allocations of
  // purlinMemAlloc and purlinCommRegister (peer addresses per rank).
  bool multiProcess = false;
  int rank = 0;
  std::shared_ptr<purlin::rt::Bootstrap> boot;
  std::shared_ptr<purlin::rt::FdChannel> fds;
  struct SymAlloc {
    char *base;
    size_t bytes;
    std::vector<void *> peers; // per rank; peers[rank] == base
    bool registered = false;   // purlinCommRegister's (else purlinMemAlloc's)
  };
  std::vector<SymAlloc> sym;
  // The staging area (docs/multiprocess.md, "Buffers that are not
  // registered"): symmetric memory of stagingBytes a rank, allocated at
  // init (PURLIN_STAGING_BYTES, default kDefaultStagingBytes; 0: none). An
  // eager launch copies a buffer that is neither purlinMemAlloc memory nor
  // registered into it, runs there, and copies the outputs back.
  std::vector<void *> staging; // per rank
  size_t stagingBytes = 0;
  // CUDA graphs (Graph.cpp): a captured launch whose buffers are not
  // registered reads its shared state from a slot of device memory, which
  // purlinCommRegisterGraphBuffers completes with the peers' addresses.
  struct GraphSlots {
    std::vector<void *> chunks; // device memory, kSlotsPerChunk slots each
    size_t slotBytes = 0;       // the datapath's, rounded up
    int used = 0;               // slots handed out (never reused)
    cudaStream_t stream = nullptr; // writes slots, outside any capture
    // Slots waiting for registration: their index and shared state (this
    // rank's own addresses where a peer's are not known yet).
    struct Pending {
      int index;
      purlin::exec::Shared S;
    };
    std::vector<Pending> pending;
    // The buffers recorded, in capture order: this rank's pointer and
    // bytes, the pending slot (index into `pending`) and buffer it fills.
    struct Recorded {
      char *ptr;
      size_t bytes;
      int pending, buffer;
    };
    std::vector<Recorded> recorded;
  } graph;
};

struct purlinColl {
  purlinComm *comm = nullptr;
  const purlin_collective_info *info = nullptr;
  const purlin::rt::RuntimeTarget *datapath = nullptr;
  purlin::Collective desc;
  purlin::rt::BoundValues bound; // what every launch must match
  std::vector<int> scalarParams; // indices into desc.params: R, counts, roots
  std::vector<std::string> scalarNames; // without R
  int ranksSlot = -1;
  std::vector<int> tableParams;    // indices into desc.params, in order
  std::vector<int64_t> maxScalars; // by slot
  // Tables: every entry of table t lies in [0, tableMax[t]] (maxParams, or
  // the declared bound at the maximum scalars); a table bound at compile
  // time takes exactly its bound values (boundTables[t], else empty).
  std::vector<int64_t> tableMax;
  std::vector<std::vector<int64_t>> boundTables;
  int64_t scratchBytes = 0; // per rank, at the maximum values
  // Per plan: where its scratch starts and how much it may use. Plans share
  // one region, except those with exclusive_scratch (flagged lines), each
  // of which gets its own after it.
  std::vector<int64_t> planScratchOff, planScratchBytes;
  // Per plan with staging by launch parity: where half 1 of its parity
  // areas lies (exec::Shared::parityStride), the single-half layout's end
  // at the maximum values, so that calls of any size keep the halves apart
  // (no barrier orders a launch after the peers' reads of the launch
  // before); 0 for other plans.
  std::vector<int64_t> planParityStride;
  // The parameters at the maximum binding (maxParams): where every launch
  // whose ranks are not all in one launch puts its areas (areasAtMaxima).
  purlin::exec::Params maxP{};
  // Per plan, the parameters its scratch is laid out at: maxP, or for a
  // plan of the low-latency band (several_launches) the band's binding
  // (bandBinding: its scratch is 4R times a rank's buffer, so it is sized
  // by the band's largest call, not by maxParams).
  std::vector<purlin::exec::Params> planMaxP;
  bool hasOpParam = false;
  bool hasEpilogue = false;    // some clause has an epilogue
  uint64_t epiLocalPairs = 0;  // epilogueLocalPairs(desc): no overlap at one start
  // Per buffer, the element type it declares (an epilogue's own buffer of
  // another floating type) as its number, or -1: the launch's type.
  std::vector<int> bufDType;
  int fixedOp = -1;            // the op of clauses with a fixed reduction
  std::vector<void *> scratch; // per rank
  std::vector<std::vector<void *>> sigs; // per plan, per rank
  std::string lastPlan;
  // Cache of the last valid launch's parameters: its scalars and table
  // entries, the buffer sizes and executor parameters they give.
  bool lastValid = false;
  std::vector<int64_t> lastScalars, lastTables;
  std::vector<int64_t> lastElems;
  purlin::EpiRows lastRows; // the epilogue's rows at the last parameters (choosePlan)
  purlin::exec::Params lastParams;
};

namespace purlin {
namespace rt {
/// Bytes of one element of buffer i in a launch: its own type's where it
/// declares one (exec::Shared::bufDType), else the launch's.
inline int bufElemSize(const exec::Shared &S, int i) {
  return S.bufDType[i] < 0 ? S.elemSize : dtypeSize((DType)S.bufDType[i]);
}
// Params.cpp: a launch's parameters.

/// The binding of a launch's scalars (R from the communicator).
void makeBinding(const purlinColl *c, const int64_t *scalars, Binding &b);
/// The extents of table `t` under the scalars of `b`, and its entries.
bool tableShape(const purlinColl *c, int t, const Binding &b,
                std::vector<int64_t> &ext, int64_t &words, std::string &err);
/// "cnt[8][8]": a table and its extents; with `lin`, the subscripts of its
/// row-major entry `lin` instead.
std::string tableText(const std::string &name, const std::vector<int64_t> &ext,
                      int64_t lin = -1);
/// The element type and op of a call, checked against the values bound at
/// compile time; `op` is the op the moves take (a copy collective's copy, a
/// clause's fixed op when there is no op parameter).
purlinStatus typeAndOp(const purlinColl *c, int dtype, int launchOp, int &op);
/// The launch's scalars into S.P.s (R from the communicator), each checked
/// against its value bound at compile time and the instance's maximum.
purlinStatus bindScalars(const purlinColl *c, const purlinArgs *a,
                         exec::Shared &S);
/// The launch's tables and buffer sizes (c->lastElems) and, for a
/// collective with tables, its executor parameters (c->lastParams); the
/// scalars are already checked. Cached for a launch that repeats the last
/// valid one's scalars and table entries.
purlinStatus bindLaunch(purlinColl *c, const purlinArgs *a);

// MultiProcess.cpp: this rank's buffers of a multi-process launch as every
// rank's (`out`, [rank * nb + buffer]), through the symmetric allocations.
// A buffer that is in none is PURLIN_ERR_NOT_REGISTERED, unless the launch's
// stream is being captured: then its index goes to `missed` and every
// rank's entry is this rank's pointer (the launch then goes through a slot:
// Graph.cpp).
/// A buffer of an eager multi-process launch that goes through the
/// staging area: its index, offset in the area and bytes.
struct StagedBuffer {
  int buf;
  int64_t off, bytes;
};
/// Default size of the staging area a rank (bytes).
constexpr size_t kDefaultStagingBytes = 32u << 20;
/// An eager launch's buffer that is in no symmetric allocation goes
/// through the staging area (`staged`: every rank's entry is that rank's
/// part of the area) when the area holds them all, else
/// PURLIN_ERR_NOT_REGISTERED.
purlinStatus symmetricBuffers(const purlinColl *c, const purlinArgs *a,
                              const purlin::exec::Shared &S,
                              std::vector<void *> &out,
                              std::vector<int> &missed,
                              std::vector<StagedBuffer> &staged);
/// Copies this rank's staged buffers: into the area before the
/// launch (`in`: every staged buffer, outputs too, so that what a plan does
/// not write stays as it was), or the outputs back after it.
purlinStatus copyStaged(const purlinColl *c, const purlinArgs *a,
                        const std::vector<StagedBuffer> &staged, bool in,
                        void *stream);
// Graph.cpp: a captured multi-process launch with the buffers `missed`
// (indices) not registered: records them, puts S (this rank's own
// addresses in their peers' entries) in a new slot, not ready, and launches
// plan `plan` reading it, on `stream`.
purlinStatus launchThroughSlot(purlinColl *c, int plan, const exec::Shared &S,
                               const std::vector<int> &missed, int first,
                               int n, int dtype, int op, void *stream,
                               std::string &msg);
/// Frees the slots (purlinCommDestroy, purlinCommAbort).
void freeGraphSlots(purlinComm &c);
/// Frees a multi-process communicator's memory and leaves its bootstrap
/// (purlinCommDestroy; `abort`: without waiting for any peer).
void closeProcessComm(purlinComm &c, bool abort);

// Comm.cpp: the error word and wait timeout both communicator kinds share.
purlinStatus initErrorWord(purlinComm &c);
/// A sticky device error (timeout, mismatch) as a status with its message;
/// PURLIN_SUCCESS when there is none (a not-registered report, which is
/// not sticky, is left for purlinCommCheck).
purlinStatus stickyDeviceError(const purlinComm &c);
} // namespace rt
} // namespace purlin
