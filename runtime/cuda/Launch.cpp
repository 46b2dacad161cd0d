// purlinLaunch: validates a call (element type, op, parameters, buffers),
// chooses the plan (its size band's, or one proved right for the call's
// overlap: runtime/core Launch.h) and hands every GPU's ranks to the
// collective's datapath, on that GPU's stream.
#include "purlin/runtime/Launch.h"
#include "Internal.h"
#include "purlin/spec/Hash.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

using namespace purlin;
using namespace purlin::rt;

namespace {
/// PURLIN_ONE_LAUNCH=0 keeps the boundary barriers even when one launch
/// holds every rank, to measure what they cost on several GPUs.
bool oneLaunchAllowed() {
  static const bool on = [] {
    const char *e = std::getenv("PURLIN_ONE_LAUNCH");
    return !(e && e[0] == '0');
  }();
  return on;
}

/// PURLIN_HOST_PROFILE=1: purlinLaunch's host time by phase, summed over
/// the process's successful launches and printed to stderr at exit (what
/// an eager launch's host time is made of). Off, a phase costs one test of
/// a flag read once.
struct HostProfile {
  static constexpr int kPhases = 5;
  double ns[kPhases] = {};
  long long launches = 0;
  ~HostProfile() {
    static const char *const names[kPhases] = {
        "checks, scalars, sizes", "buffers", "plan choice", "layout, scratch",
        "the datapath's launch (CUDA)"};
    if (!launches)
      return;
    double total = 0;
    for (double x : ns)
      total += x;
    std::fprintf(stderr, "purlinLaunch host time, %lld launches: %.2f us each\n",
                 launches, total / 1e3 / (double)launches);
    for (int i = 0; i < kPhases; ++i)
      std::fprintf(stderr, "  %-30s %.2f us\n", names[i],
                   ns[i] / 1e3 / (double)launches);
  }
};
bool hostProfileOn() {
  static const bool on = [] {
    const char *e = std::getenv("PURLIN_HOST_PROFILE");
    return e && e[0] == '1';
  }();
  return on;
}
HostProfile &hostProfile() {
  static HostProfile p;
  return p;
}
/// The clock of one launch's phases (nothing when the profile is off).
struct PhaseClock {
  bool on = hostProfileOn();
  std::chrono::steady_clock::time_point t =
      on ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  void mark(int phase) {
    if (!on)
      return;
    const auto n = std::chrono::steady_clock::now();
    hostProfile().ns[phase] += (double)std::chrono::duration_cast<std::chrono::nanoseconds>(n - t).count();
    t = n;
  }
  void done() {
    if (on)
      ++hostProfile().launches;
  }
};

/// Every rank's buffers into S.buf (this rank's, translated, on a
/// multi-process communicator), checked against their sizes; `flat` holds
/// them as [rank * nb + buffer], `maxBytes` the largest. `missed`: the
/// buffers of a captured multi-process launch that are not registered yet;
/// `staged`: those of an eager one that go through the staging area
/// (symmetricBuffers).
purlinStatus bindBuffers(const purlinColl *c, const purlinArgs *a,
                         exec::Shared &S, std::vector<void *> &flat,
                         int64_t &maxBytes, std::vector<int> &missed,
                         std::vector<StagedBuffer> &staged) {
  const Collective &d = c->desc;
  const int R = c->comm->R, nb = (int)d.buffers.size();
  const std::vector<int64_t> &elems = c->lastElems;
  if (!a->buffers)
    return fail(PURLIN_ERR_NULL_BUFFER, "purlinLaunch: null buffer array");
  void *const *bufs = a->buffers;
  std::vector<void *> symBufs;
  if (c->comm->multiProcess) {
    if (purlinStatus st =
            symmetricBuffers(c, a, S, symBufs, missed, staged))
      return st;
    bufs = symBufs.data();
  }
  maxBytes = 0;
  flat.assign((size_t)R * nb, nullptr);
  for (int r = 0; r < R; ++r)
    for (int i = 0; i < nb; ++i) {
      void *p = bufs[r * nb + i];
      const int es = bufElemSize(S, i);
      const int64_t bytes = elems[i] * es;
      maxBytes = std::max(maxBytes, bytes);
      if (!p && bytes > 0)
        return fail(PURLIN_ERR_NULL_BUFFER, "buffer '" + d.buffers[i].name +
                                                "' of rank " +
                                                std::to_string(r) + " is null");
      if ((uintptr_t)p % (uintptr_t)es)
        return fail(PURLIN_ERR_MISALIGNED,
                    "buffer '" + d.buffers[i].name + "' of rank " +
                        std::to_string(r) + " is not aligned to its " +
                        std::to_string(es) + "-byte elements");
      S.buf[r][i] = p;
      flat[(size_t)r * nb + i] = p;
    }
  return PURLIN_SUCCESS;
}

/// The plan for the call: its size band's, or one proved right for the
/// call's overlap (each output at its input's address, or any other).
purlinStatus pickPlan(const purlinColl *c, const std::vector<void *> &flat,
                      int64_t maxBytes, const exec::Shared &S, bool ownRow,
                      bool severalLaunches, int &pick) {
  const Collective &d = c->desc;
  int es[exec::kMaxBuffers];
  for (size_t i = 0; i < d.buffers.size(); ++i)
    es[i] = bufElemSize(S, (int)i);
  const purlin_collective_info *info = c->info;
  const int R = c->comm->R;
  // ownRow: the peers' entries are placeholders (a captured launch whose
  // buffers are registered later); buffers are symmetric, so this rank's
  // overlap is every rank's.
  const InPlace overlap =
      ownRow ? classifyOverlap(d, flat.data() + (size_t)c->comm->rank *
                                                    d.buffers.size(),
                               1, c->lastElems.data(), es, c->epiLocalPairs)
             : classifyOverlap(d, flat.data(), R, c->lastElems.data(), es,
                               c->epiLocalPairs);
  pick = choosePlan(info, maxBytes, overlap, R, "", severalLaunches, c->hasEpilogue,
                    c->lastRows);
  if (pick >= 0)
    return PURLIN_SUCCESS;
  int reach = 0;
  for (int i = 0; i < info->nplans; ++i)
    reach = std::max(reach, info->plans[i].inplace_max_ranks);
  return fail(
      PURLIN_ERR_NO_PLAN,
      std::string("an output overlaps an input") +
          (overlap == InPlace::SameStart ? " (at the same address)" : "") +
          ", and no plan of '" + d.name + "' is proved right for that" +
          (reach > 0 && R > reach ? " at " + std::to_string(R) +
                                        " ranks (the in-place proofs reach " +
                                        std::to_string(reach) + ")"
                                  : ""));
}
} // namespace

/// The arguments every rank of a multi-process launch must agree on, hashed
/// (FNV-1a over 64-bit words): element type, op, scalars, table entries,
/// and which buffers go through the staging area (a rank that staged where
/// a peer did not would read the wrong memory). The buffers' addresses
/// differ by rank and are not in it.
static uint32_t callFingerprint(const purlinArgs *a,
                                const std::vector<StagedBuffer> &staged) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) { h = fnv1aWord(h, v); };
  mix((uint64_t)a->dtype);
  mix((uint64_t)a->op);
  mix((uint64_t)a->nscalars);
  for (int i = 0; a->scalars && i < a->nscalars; ++i)
    mix((uint64_t)a->scalars[i]);
  mix((uint64_t)a->ntableWords);
  for (int i = 0; a->tables && i < a->ntableWords; ++i)
    mix((uint64_t)a->tables[i]);
  uint64_t stagedMask = 0;
  for (const StagedBuffer &b : staged)
    stagedMask |= 1ull << b.buf;
  mix(stagedMask);
  return (uint32_t)(h ^ (h >> 32));
}

/// Threads a lane for a launch whose largest buffer a rank holds maxBytes:
/// 256 up to kSmallLaneBytes (8 KiB all_reduce, 8 ranks, H200: 2.22 us
/// against 2.57 with 512; docs/performance.md, tenth session), else 0 (the
/// target's own). Not where a clause has an epilogue: its register row
/// holds a row in a lane's registers, and needs every thread.
static int smallLaneThreads(const purlinColl &c, int64_t maxBytes) {
  constexpr int64_t kSmallLaneBytes = 64 << 10;
  return !c.hasEpilogue && maxBytes <= kSmallLaneBytes ? 256 : 0;
}

extern "C" purlinStatus purlinLaunch(purlinColl_t c, const purlinArgs *a) {
  if (!c || !a)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinLaunch: null argument");
  PhaseClock clock;
  purlinComm *comm = c->comm;
  if (*(volatile uint32_t *)comm->errHost)
    if (purlinStatus st = stickyDeviceError(*comm))
      return st; // a device error (timeout, mismatch) is sticky
  const Collective &d = c->desc;
  int op = exec::kCopy;
  if (purlinStatus st = typeAndOp(c, a->dtype, a->op, op))
    return st;
  exec::Shared S;
  S.R = comm->R;
  S.op = op;
  S.elemSize = dtypeSize((DType)a->dtype);
  for (size_t i = 0; i < c->bufDType.size(); ++i)
    S.bufDType[i] = c->bufDType[i] >= 0 && c->bufDType[i] != a->dtype
                        ? (int8_t)c->bufDType[i] : (int8_t)-1;
  // One launch holds every rank (one GPU, one process).
  S.oneLaunch =
      comm->devices.size() == 1 && !comm->multiProcess && oneLaunchAllowed();
  if (purlinStatus st = bindScalars(c, a, S))
    return st;
  // Tables, buffer sizes and the executor's parameters: evaluated once per
  // distinct (scalars, table entries), then cached.
  if (purlinStatus st = bindLaunch(c, a))
    return st;
  if (!c->tableParams.empty())
    S.P = c->lastParams; // the scalars above, and the tables
  clock.mark(0);
  std::vector<void *> flat;
  std::vector<int> missed; // captured, not registered yet: through a slot
  std::vector<StagedBuffer> staged; // eager, not registered: copied
  int64_t maxBytes = 0;
  if (purlinStatus st = bindBuffers(c, a, S, flat, maxBytes, missed, staged))
    return st;
  if (comm->multiProcess)
    S.fingerprint = callFingerprint(a, staged);
  clock.mark(1);
  int pick = -1;
  if (purlinStatus st =
          pickPlan(c, flat, maxBytes, S, !missed.empty(), !S.oneLaunch, pick))
    return st;
  clock.mark(2);
  // The plan's values and layout in S; false: more scratch than the
  // instance has for it (past its maxParams, or a band plan's binding).
  auto layFor = [&](int p) {
    const purlin_plan_info &pl = c->info->plans[p];
    S.L = pl.lanes;
    S.K = pl.chunks;
    S.liveLanes = liveLanes(pl, S); // a one-shot epilogue's: no lane without a row
    S.laneThreads = smallLaneThreads(*c, maxBytes);
    S.nsignals = pl.nsignals;
    S.parityStride = c->planParityStride[p]; // the halves of every call size
    return pl.layout(&S) <= c->planScratchBytes[p];
  };
  bool laid = layFor(pick);
  const bool unordered = comm->devices.size() > 1 || comm->multiProcess;
  // A plan of the low-latency band (several_launches, purlinc --ll-bytes)
  // takes the call only where it fits the band's binding, which its
  // scratch is laid out at (planMaxP: bandBinding), and, on unordered ranks,
  // where no parity clause idles while another moves (unorderedCall: a rank
  // could overwrite lines a peer has not read). Else the plans with
  // barriers take it (choosePlan without several launches; every rank
  // decides alike, from the call's arguments; a barrier plan's call orders
  // the ranks, so the band plan's next launch follows it safely). An
  // empty call fits (nothing moves) and is skipped below.
  if (c->info->plans[pick].several_launches) {
    bool fits = laid && !(unordered && unorderedCall(c->info->plans[pick],
                                                     c->planMaxP[pick], S) !=
                                           Unordered::kRun);
    if (fits && !S.oneLaunch) {
      exec::Shared T = S;
      fits = areasAtMaxima(c->info->plans[pick], c->planMaxP[pick], T);
    }
    if (!fits) {
      int other = -1;
      if (purlinStatus st = pickPlan(c, flat, maxBytes, S, !missed.empty(), false, other))
        return st;
      if (c->info->plans[other].several_launches)
        return fail(PURLIN_ERR_NO_PLAN,
                    std::string("plan '") + c->info->plans[pick].strategy +
                        "' cannot take this call and the collective has no plan "
                        "with barriers for it");
      pick = other;
      laid = layFor(pick);
    }
  }
  const purlin_plan_info &pl = c->info->plans[pick];
  if (!laid)
    return fail(PURLIN_ERR_PARAM_RANGE,
                std::string("plan '") + pl.strategy + "' needs " +
                    std::to_string(pl.layout(&S)) +
                    " bytes of scratch for this "
                    "launch; the instance has " +
                    std::to_string(c->planScratchBytes[pick]) +
                    " (its maxParams)");
  if (emptyParityLaunch(S)) {
    // Nothing to move, and a launch that reads no peer's line would break
    // the order the parity halves rely on (a call of count 0 between two
    // others): not launched, on any rank.
    c->lastPlan = pl.strategy;
    clock.done();
    return ok();
  }
  // Ranks whose launches are not ordered (several GPUs or processes): a
  // parity plan's call in which one staged clause moves nothing while
  // another moves would let a rank run two launches ahead of a peer and
  // overwrite lines it has not read (partialParityLaunch): refused where
  // the parity plan is the collective's only kind (a band plan's call was
  // decided above: it runs, or went to the barrier plans).
  if (unordered && !pl.several_launches &&
      unorderedCall(pl, c->planMaxP[pick], S) != Unordered::kRun)
    return fail(PURLIN_ERR_NO_PLAN,
                std::string("plan '") + pl.strategy +
                    "' cannot run this call on ranks in several launches: a "
                    "clause it stages by launch parity moves nothing here "
                    "while another moves, which would let a rank overwrite "
                    "lines a peer has not read yet (docs/snac.md); use a plan "
                    "with barriers (e.g. --strategy=staged or auto) for such "
                    "sizes");
  // Ranks whose launches are not ordered (several GPUs or processes): every
  // area where calls of other sizes put it too (areasAtMaxima; after the
  // empty test, which reads the call's own slots).
  if (!S.oneLaunch && !areasAtMaxima(pl, c->planMaxP[pick], S))
    return fail(PURLIN_ERR_PARAM_RANGE,
                std::string("plan '") + pl.strategy +
                    "': a staging slot of this launch is larger than at "
                    "the instance's maxParams");
  for (int r = 0; r < comm->R; ++r) {
    S.scratch[r] = (char *)c->scratch[r] + c->planScratchOff[pick];
    S.signals[r] = (uint64_t *)c->sigs[pick][r];
  }
  c->lastPlan = pl.strategy;
  clock.mark(3);
  DeviceGuard guard;
  for (size_t g = 0; g < comm->devices.size(); ++g) {
    cudaError_t e = cudaSetDevice(comm->devices[g]);
    if (e != cudaSuccess)
      return cudaFail(e, "selecting GPU " + std::to_string(comm->devices[g]));
    void *stream = a->streams ? a->streams[g] : nullptr;
    std::string msg;
    if (!staged.empty())
      if (purlinStatus st = copyStaged(c, a, staged, true, stream))
        return st;
    purlinStatus st =
        missed.empty()
            ? c->datapath->launch(*c->info, pick, S, comm->first[g],
                                  comm->count[g], a->dtype, op, stream, msg)
            : launchThroughSlot(c, pick, S, missed, comm->first[g],
                                comm->count[g], a->dtype, op, stream, msg);
    if (st != PURLIN_SUCCESS)
      return fail(st, std::string("launching '") + d.name + "' (" +
                          pl.strategy + ") on GPU " +
                          std::to_string(comm->devices[g]) + ": " + msg);
    if (!staged.empty())
      if (purlinStatus st = copyStaged(c, a, staged, false, stream))
        return st;
  }
  clock.mark(4);
  clock.done();
  return ok();
}
