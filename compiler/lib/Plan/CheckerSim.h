// The checker's simulation (internal to PurlinPlan): one run of a plan
// under one configuration (ranks, counts, element size, launch model,
// aliasing), by the executor's own code (exec.h) on a symbolic target.
//
//  - Memory is simulated per element. Every rank's buffers and scratch get
//    distinct simulated addresses; in the same-address in-place model an
//    output is given its input's address, so aliasing is real. Each element
//    (a "cell") holds a symbolic value, a hash-consed term (CheckTerms.cpp).
//  - Processes are (rank, lane) pairs plus one caller per rank (who writes
//    the inputs before a launch and reads the outputs after it). They run
//    cooperatively; happens-before is tracked with vector clocks: a
//    process's own component is its phase, bumped at each barrier of its
//    lane, and a wait joins the clock of the first notify that reached the
//    value it waited for. Accesses of one phase of one lane are concurrent
//    unless they belong to one name (a lane's threads run a step's names at
//    once; one thread reads a name's sources before writing it).
//  - Rules, each reported at the plan step: races per element, the
//    in-place rules, the postcondition (CheckPost.cpp) and deadlocks.
#pragma once

#include "DynClause.h"

#include "purlin/Plan/Plan.h"

#include <memory>
#include <unordered_map>
#include <string>
#include <vector>

namespace purlin {
namespace check {

/// Hash-consed symbolic values.
///  Input(rank, buffer, offset, launch): an input element as the caller
///    wrote it before that launch;
///  Poison(rank, buffer, offset): an output element before the first launch;
///  Combine(op, [terms]): the executor's combination, operands in order. A
///    combination whose first operand is a combination by the same op is
///    flattened (a fold continued) where that is exact for the element type
///    (exactFold); a combination of one term is the term itself (a copy,
///    or any op of one operand: exact in every type).
class Terms {
public:
  enum Kind : uint8_t { kInput, kPoison, kCombine };
  struct Node {
    Kind kind = kInput;
    int8_t op = 0;
    int16_t rank = 0, buf = 0;
    int32_t launch = 0;
    int64_t off = 0;
    int32_t kid0 = 0, nkids = 0; // kCombine: operands in kids_
  };
  /// A fresh term space: R ranks, buffers of `elems` elements, inputs of
  /// launches 0..launches. Leaves are numbered, not stored: an element's
  /// leaf is found without a lookup. False where they do not fit an int.
  bool reset(DType t, int R, const std::vector<int64_t> &elems, int launches);
  int input(int rank, int buf, int64_t off, int launch) const {
    return leaf(1 + launch, rank, buf, off);
  }
  int poison(int rank, int buf, int64_t off) const { return leaf(0, rank, buf, off); }
  int combine(int op, const int *kids, int n);
  Node node(int id) const;
  const int *kids(int id) const { return kids_.data() + nodes_[id - leaves_].kid0; }
  /// The leaves of a term in order, every combination flattened.
  void leaves(int id, std::vector<int> &out) const;
  /// Whether continuing a fold from a stored partial result is exact: the
  /// partial is stored in the element type, which must hold the
  /// accumulator exactly (DType.h: narrow floats accumulate in f32; avg
  /// divides at the end).
  bool exactFold(int op) const;
  /// Text of a term; inputs of another launch than `launch` say which.
  std::string str(int id, const Collective &c, int launch,
                  int maxLeaves = 6) const;
  DType dtype() const { return dtype_; }

private:
  int leaf(int slot, int rank, int buf, int64_t off) const {
    return (int)(((slot * (int64_t)R_ + rank) * nb_ + buf) * maxElems_ + off);
  }
  int intern(const Node &n, const int *kids);
  bool same(int id, const Node &n, const int *kids) const;
  static uint64_t hash(const Node &n, const int *kids);
  int R_ = 1, nb_ = 1;
  int64_t maxElems_ = 1, leaves_ = 0;
  std::vector<Node> nodes_; // combinations: id leaves_ + i
  std::vector<int> kids_;
  std::vector<int> table_; // open addressing: term ids, -1 empty
  size_t used_ = 0;
  DType dtype_ = DType::F32;
};

/// One configuration of a check.
struct SimConfig {
  int R = 1;
  int64_t count = 1;
  DType dtype = DType::F32;
  bool oneLaunch = false;
  Alias alias = Alias::None;
  // Alias::SameStart: per buffer, for an output the input at its address
  // (-1: none).
  std::vector<int> aliasOf;
  std::string text; // "R = 2, count 7, ..." for diagnostics
};

class Sim;

/// The checker's target: the Target contract of exec.h over the simulated
/// memory of a Sim (one per process and step; state lives in the Sim).
class SymTarget {
public:
  SymTarget(Sim &sim, int proc) : sim_(sim), proc_(proc) {}
  int rank() const;
  int lane() const;
  const exec::Shared &shared() const;
  uint64_t epoch() const;
  void barrier();
  bool leader() const { return true; }
  int thread() const { return 0; }
  int threads() const { return 1; }
  exec::Move *laneMoves();
  void signal(uint64_t *w, uint64_t v);
  bool wait(const uint64_t *w, uint64_t v);
  bool barrierOr(bool v);
  bool aborted() const { return false; }
  void abort() {}
  bool move(const exec::Move &m, int64_t a, int64_t b, int tid, int nthr);
  int64_t vecElems() const;
  bool moveVec(const char *const *src, int nsrc, char *const *dst, int ndst,
               int64_t soff, int64_t doff, int64_t bytes, int op, int tid,
               int nthr);
  bool pushLines(int fmt, const char *src, char *const *dst, int ndst,
                 int64_t soff, int64_t doff, int64_t bytes, int tid, int nthr);
  int consumeLines(int fmt, const char *const *src, int nsrc, char *dst,
                   int64_t soff, int64_t doff, int64_t bytes, int op, int tid,
                   int nthr);

private:
  Sim &sim_;
  int proc_;
};

/// Runs one step of the plan on `t` through exec.h (CheckRun.cpp).
void runStep(SymTarget &t, const Collective &c, const BoundCollective &bc,
             const Step &st, int chunk);
/// exec.h's scratch layout of the plan into S (CheckRun.cpp).
int64_t layoutScratch(const Collective &c, const Plan &p,
                      const BoundCollective &bc, exec::Shared &S);

class Sim {
public:
  Sim(const Collective &c, const Plan &p, std::vector<PlanDiag> &diags);
  /// Simulates three launches of the plan under `cfg` (bc: the collective
  /// bound for it, DynScope'd); false with a diagnostic on the first
  /// problem. A Sim runs any number of configurations, one at a time.
  bool run(BoundCollective &bc, const SimConfig &cfg);

private:
  friend class SymTarget;
  struct ReadRec {
    int32_t proc, time, step, launch, next;
    int64_t name;
  };
  struct Cell {
    int32_t term = -1;
    int32_t area = -1; // -1: a gap between areas, which nothing may touch
    int32_t wProc = -1, wTime = 0, wStep = -1, wLaunch = -1; // last write
    int32_t wSnap = -1; // flagged write: the writer's clock (a snapshot)
    int64_t wName = 0;
    int32_t reads = -1; // reads since the last write (readPool_ list)
    int32_t flag = 0;   // flagged line (LL: a data cell; LL128: the flag
                        // word's): the epoch of its last flagged write
    int32_t start = -1; // output: its value when the launch started
    int8_t inBuf = -1, outBuf = -1; // the input / output it is an element of
  };
  struct Area {
    int64_t cell0 = 0, cells = 0; // first cell, cell count
    int rank = 0;
    int buf = -1; // a buffer (its region; an aliased output shares it)
  };
  struct Proc {
    int rank = 0, lane = 0, launch = 0;
    size_t pc = 0;
    bool started = false, finished = false;
    std::vector<int32_t> clk;
    // A wait step's probe that found the process blocked: the first signal
    // word it found short (sigs_ index, -1: none) and the value it waits
    // for. Words only grow, so while that one is short the probe would be
    // blocked again, and the step is not probed anew (stepProc).
    int64_t waitOn = -1;
    uint64_t waitFor = 0;
  };
  // A signal word: its value and, for each value v, the snapshot of the
  // first notify that made it reach v (notifies store epochs 1..kLaunches).
  struct SigWord {
    uint64_t value = 0;
    int32_t first[4] = {-1, -1, -1, -1};
  };

  bool setup();
  void callerAct(int r, int endedLaunch);
  // The target's calls (SymTarget).
  void signalWord(uint64_t *w, uint64_t v);
  void waitWord(const uint64_t *w, uint64_t v);
  void moveNames(const exec::Move &m, int64_t a, int64_t b);
  void moveFlat(const char *const *src, int nsrc, char *const *dst, int ndst,
                int64_t soff, int64_t doff, int64_t bytes, int op);
  std::vector<int32_t> &clockOf(int proc);
  SigWord &sigWord(const uint64_t *w);
  bool stepProc(int pi, bool &progress);
  int snapshot(int pi);
  void joinSnapshot(int id);
  void flushJoins();
  int cellAt(const char *p, bool write);
  // Accesses by the current process (cur_), in the current step.
  int read(int cell, int64_t name, bool flagged);
  void write(int cell, int term, int64_t name, bool flagged);
  bool ordered(int proc, int time, int64_t name, int x, int tx, int64_t nx);
  bool stepReadsInputs() const;
  void race(int cell, bool curWrite, int otherProc, int otherStep,
            bool otherWrite, int otherLaunch);
  void fail(int step, const std::string &msg);
  std::string who(int proc, int step) const;
  std::string where(int cell, bool asOutput) const;
  std::string suffix() const;
  void deadlock();
  // CheckPost.cpp: the postcondition of rank r after launch e.
  void ensureExpected(int e);
  void postcondition(int r, int e);
  void mismatch(int cell, int want, int e, int clause);

  const Collective &c_;
  const Plan &plan_;
  BoundCollective *bc_ = nullptr;
  SimConfig cfg_;
  std::vector<PlanDiag> &diags_;
  int R_, L_, K_, P_, NP_, es_;
  exec::Shared S_;
  Terms terms_;
  std::unique_ptr<char[]> arena_;
  std::vector<Cell> cells_;
  std::vector<Area> areas_;
  std::vector<int64_t> scratchCell0_; // per rank: its scratch's first cell
  std::vector<ReadRec> readPool_;
  int64_t sigWords_ = 0; // per rank
  std::vector<uint64_t> sigMem_;
  std::vector<SigWord> sigs_;
  std::vector<int32_t> clocks_;                   // snapshots, NP_ each
  std::vector<std::pair<int32_t, int32_t>> snapWho_; // their process, phase
  std::vector<int> pendingJoins_; // snapshots a step's waits joins
  struct VecHash {
    size_t operator()(const std::vector<int> &v) const {
      size_t h = v.size();
      for (int x : v)
        h = h * 1000003u ^ (size_t)x;
      return h;
    }
  };
  std::unordered_map<std::vector<int>, std::vector<int32_t>, VecHash> joinCache_;
  std::vector<std::pair<int32_t, int32_t>> snapOf_; // per proc: time, id
  exec::Move moves_[exec::kMaxRanks];
  std::vector<std::pair<int, int>> prog_; // (step, chunk) of one launch
  std::vector<Proc> procs_;
  std::vector<std::vector<int32_t>> callerClk_, rankEnd_;
  std::vector<std::vector<int>> lanesDone_; // [launch][rank]
  std::vector<int> callerDone_;             // launches each caller finished
  // Alias::Any: per rank, per process, the launch and last phase in which
  // it read the rank's inputs; the launch in which its outputs were written.
  std::vector<std::vector<std::pair<int32_t, int32_t>>> inReads_;
  std::vector<std::vector<bool>> outWritten_; // [rank][launch]
  // The expected terms per launch: [launch][rank][output] per element (-1:
  // no name writes it), and the clause of the name.
  std::vector<std::vector<std::vector<std::vector<int>>>> expected_;
  std::vector<std::vector<std::vector<int>>> expClause_;
  // The current process and step; probing: a blocking step tried without
  // effects, to see whether it can run.
  int cur_ = -1, curStep_ = -1;
  bool probe_ = false, blocked_ = false;
  int64_t probeWaitOn_ = -1; // the probe's first short word (Proc::waitOn)
  uint64_t probeWaitFor_ = 0;
  int64_t moveSeq_ = 0;
  bool failed_ = false;
  std::vector<PlanDiag> pending_; // a postcondition problem, reported last
  // Three, so that a launch reuses what the launch two before it used
  // (staging by launch parity: half e & 1 again at e + 2) with lanes and
  // ranks running freely. SigWord::first holds 1..kLaunches.
  static constexpr int kLaunches = 3;
};

} // namespace check
} // namespace purlin
