// SNAC inference: from a collective's layouts to per-rank programs of stage,
// notify and consume. General over any collective that passes
// checkStructure: the steps are derived from each clause's rank roles (who
// contributes, who receives), never from the collective's name.
#include "purlin/Plan/Plan.h"

#include <algorithm>

namespace purlin {

namespace {
struct Builder {
  Plan &p;
  int signal(const std::string &name) {
    p.signals.push_back(name);
    return (int)p.signals.size() - 1;
  }
  Step &add(StepKind k, int clause, bool chunked = false) {
    Step s;
    s.kind = k;
    s.clause = clause;
    s.chunked = chunked;
    p.steps.push_back(s);
    return p.steps.back();
  }
  void stage(int clause, StageMode m, bool chunked = false,
             LineFormat lines = LineFormat::None, bool parity = false) {
    Step &s = add(StepKind::Stage, clause, chunked);
    s.stage = m;
    s.lines = lines;
    s.parity = parity;
  }
  void notify(int clause, int sig, PeerSet peers, bool chunked = false,
              bool boundary = false) {
    Step &s = add(StepKind::Notify, clause, chunked);
    s.signal = sig;
    s.peers = peers;
    s.boundary = boundary;
  }
  void wait(int clause, int sig, PeerSet peers, bool chunked = false,
            bool allLanes = false, bool boundary = false) {
    Step &s = add(StepKind::Wait, clause, chunked);
    s.signal = sig;
    s.peers = peers;
    s.allLanes = allLanes;
    s.boundary = boundary;
  }
  void consume(int clause, Selection sel, SourceKind src, DestKind dst,
               bool chunked = false, LineFormat lines = LineFormat::None,
               bool parity = false) {
    Step &s = add(StepKind::Consume, clause, chunked);
    s.sel = sel;
    s.src = src;
    s.dst = dst;
    s.lines = lines;
    s.parity = parity;
  }
};

// Copy stages first: each input buffer that a clause reads is copied into
// scratch on every rank that contributes from it. A copy stage copies its
// clause's buffer on that clause's contributors, so a buffer gets one stage
// (of a clause whose contributors are every rank, where there is one), or
// one per distinct contributor selector among the clauses that read it.
// (Outputs that steps read are copied at their step: stepRound.)
void copyInputs(const Collective &c, Builder &b) {
  for (size_t buf = 0; buf < c.buffers.size(); ++buf) {
    if (c.buffers[buf].role != BufferRole::In)
      continue;
    std::vector<int> readers;
    for (size_t k = 0; k < c.clauses.size(); ++k)
      if (c.bufferIndex(c.clauses[k].from.buffer) == (int)buf)
        readers.push_back((int)k);
    int everyone = -1;
    for (int k : readers) {
      const RankRole::Kind r = rankRole(c, c.clauses[k], c.clauses[k].from.rank).kind;
      if ((r == RankRole::Every || r == RankRole::Coord) && everyone < 0)
        everyone = k;
    }
    if (everyone >= 0) {
      b.stage(everyone, StageMode::Copy);
      continue;
    }
    std::vector<std::string> sels;
    for (int k : readers) {
      const std::string r = rankSelText(c.clauses[k].from.rank);
      if (std::find(sels.begin(), sels.end(), r) == sels.end()) {
        sels.push_back(r);
        b.stage(k, StageMode::Copy);
      }
    }
  }
}

std::string suffix(const Collective &c, size_t k) {
  return c.clauses.size() > 1 ? std::to_string(k) : "";
}

// A step (a clause that reads an output that earlier clauses wrote), in
// every strategy: each rank waits until every rank is done with the
// earlier clauses (`step`, all lanes: those writes were cut among other
// lanes and ranks), copies the output it contributes into its scratch,
// waits until every copy is made (`ready`), and reads the copies, so that
// its writes, which may land where it reads (an all-reduce in place), take
// nothing a peer still reads. Every rank takes part: a step orders what any
// rank wrote before it. `done`, after the last clause only: every rank's
// writes have landed and its reads are over before any caller reuses a
// buffer (a boundary sync). Before another step, that step's barrier orders
// the copies' readers before its copy, in this launch and the next.
void stepRound(const Collective &c, Builder &b, size_t k, Selection sel, DestKind dst,
               bool chunked) {
  const int ck = (int)k;
  const std::string sfx = suffix(c, k);
  const bool last = k + 1 == c.clauses.size();
  const int step = b.signal("step" + sfx), ready = b.signal("ready" + sfx);
  b.notify(ck, step, PeerSet::All);
  b.wait(ck, step, PeerSet::All, false, true);
  b.stage(ck, StageMode::Copy, chunked);
  b.notify(ck, ready, PeerSet::All);
  b.wait(ck, ready, PeerSet::All, false, true);
  b.consume(ck, sel, SourceKind::Scratch, dst, chunked);
  if (!last && readsOutput(c, k + 1))
    return;
  const int done = b.signal("done" + sfx);
  b.notify(ck, done, PeerSet::All, false, true);
  b.wait(ck, done, PeerSet::All, false, true, true);
}

// Whether a clause's contributors or destinations are a set: two-shot then
// splits each group of names among the set's ranks, and syncs with the
// ranks that share a group (`group`) rather than every rank.
bool hasSet(const Clause &cl) { return cl.from.rank.isSet() || cl.to.rank.isSet(); }

// The one-round strategies: stage, a `ready` barrier, one consume, a
// `done` barrier, per clause.
//   ready: a contributor's data may be read (it has been written/copied);
//   done:  a destination has finished reading, so the contributor may let
//          its caller reuse the input (and the next launch overwrite it);
//          where consumers write to peers, also that every write has landed.
// With `copy`, contributions are read from scratch copies of the inputs,
// made first: one copy stage per input buffer a clause reads, before any
// clause writes (in place, an earlier clause's outputs may overwrite a
// later clause's inputs). A copy is cut among the contributor's lanes unlike
// the reads of any one consumer lane, so both waits then cover every lane.
// Boundary syncs: `ready` without a copy only orders against what preceded
// the launch (the inputs); `done` against what follows it (with copies
// first, no later step of the launch reuses what a clause read; without,
// the inputs are only read): when every rank runs in one launch, the
// launch's start and end order them. The checker proves it, in place too.
//
// Unfused (`unfused`, for a clause with an epilogue): the consume combines
// into the received areas instead (`to received`: f32, never rounded), and
// a second consume (`mine from received to self`) runs the epilogue over
// each rank's own rows, apart from the combine, as an all-reduce followed
// by a row kernel would, with the fused form's arithmetic. Where the
// received rows come from:
//  - one-shot (mine): the rank's own lanes, which cut names in the first
//    consume and rows in the second (exec/Epilogue.h), so a barrier of its
//    lanes (`kept`, self) before the second, which comes after `done`: in
//    place, its stores may land on inputs that peers read until then;
//  - two-shot (owned): the owner of the rows keeps them in its own area
//    (one store a name) and applies them itself (`owned from received to
//    all`: every rank's outputs of its rows, each with that rank's
//    inputs), so again a barrier of its lanes (`kept`, self) orders the
//    second consume after the first; other owners read and write other
//    rows (outputs at their inputs' address: the fused two_shot's owned
//    consume has the same cut). `done` follows it, so that no rank's next
//    launch reads or writes what the apply still uses.
//  - gathered (two_shot_gather): the owners keep their rows as two-shot
//    does (`owned ... to received`), and every rank applies its own rows,
//    each read from its owner's area (`mine from owners to self`): the
//    shape of an all-reduce followed by a row kernel, every rank busy
//    however few rows an owner has. Every lane of every owner must be
//    done first: a barrier of each rank's lanes (`kept`, self), then a
//    sync of every rank (`gathered`: each lane waits for its own lane of
//    each peer, which passed its rank's barrier). The areas are scratch,
//    so the outputs may lie anywhere on the inputs (every rank's stash
//    read them before that sync). `done` follows, as in two-shot.
void oneRound(const Collective &c, Builder &b, bool copy, Selection sel,
              DestKind dst, PeerSet readers, PeerSet contributors,
              bool unfused = false, bool gather = false) {
  if (copy)
    copyInputs(c, b);
  for (size_t k = 0; k < c.clauses.size(); ++k) {
    if (readsOutput(c, k)) {
      stepRound(c, b, k, sel, dst, false);
      continue;
    }
    int ck = (int)k;
    std::string sfx = suffix(c, k);
    // Two-shot over a set: the ranks of each group among themselves.
    const PeerSet rd = readers == PeerSet::All && hasSet(c.clauses[k]) ? PeerSet::Group : readers,
                  co = contributors == PeerSet::All && hasSet(c.clauses[k]) ? PeerSet::Group
                                                                             : contributors;
    int ready = b.signal("ready" + sfx), done = b.signal("done" + sfx);
    if (!copy)
      b.stage(ck, StageMode::Expose);
    b.notify(ck, ready, rd, false, !copy);
    b.wait(ck, ready, co, false, copy, !copy);
    // A rank that is not its own contributor (a shift, a halo) waits for
    // its own lanes' copies too before it writes its outputs, which may lie
    // on the inputs it copied: a barrier of its lanes.
    if (copy && co == PeerSet::Srcs && isGeneralClause(c, c.clauses[k])) {
      b.notify(ck, ready, PeerSet::Self);
      b.wait(ck, ready, PeerSet::Self, false, true);
    }
    const bool apart = unfused && !c.clauses[k].epilogue.empty();
    b.consume(ck, sel, copy ? SourceKind::Scratch : SourceKind::Input,
              apart ? DestKind::Received : dst);
    // The rows a rank applies are the ones its own lanes kept (cut
    // otherwise): a barrier of its lanes orders them.
    auto apply = [&]() {
      const int kept = b.signal("kept" + sfx);
      b.notify(ck, kept, PeerSet::Self);
      b.wait(ck, kept, PeerSet::Self, false, true);
      if (gather) {
        const int gathered = b.signal("gathered" + sfx);
        b.notify(ck, gathered, rd);
        b.wait(ck, gathered, co);
        b.consume(ck, Selection::Mine, SourceKind::Owners, DestKind::Self);
        return;
      }
      b.consume(ck, sel, SourceKind::Received, sel == Selection::Owned ? DestKind::All
                                                                        : DestKind::Self);
    };
    if (apart && sel == Selection::Owned)
      apply();
    const bool last = k + 1 == c.clauses.size();
    // The one-shot's apply (from received, to self) stores this rank's
    // outputs after `done`: a sync of every launch model there (not a
    // boundary one, skipped where every rank is in one launch), so that no
    // peer still reads an input the apply stores over (each lane waits for
    // its own lane of each peer; `kept`, of every lane of this rank, then
    // covers every lane of every peer): direct_unfused is right in place
    // without copies. Where a target runs the apply as a launch of its
    // own, the plan's launch returns before it (`epilogueApart`).
    const bool applyAfter = apart && sel == Selection::Mine && !copy;
    b.notify(ck, done, co, false, (last || copy) && !applyAfter);
    b.wait(ck, done, rd, false, copy, (last || copy) && !applyAfter);
    if (apart && sel == Selection::Mine)
      apply();
  }
}

// One-shot: every destination reads the contributions of its names where
// they lie (inputs, or scratch copies of them) and combines them; barriers
// address the ranks that exchange names.
void direct(const Collective &c, Builder &b, bool copy, bool unfused = false) {
  oneRound(c, b, copy, Selection::Mine, DestKind::Self, PeerSet::Dsts,
           PeerSet::Srcs, unfused);
}

// Two-shot: rank r owns part r of every box of names; it reads every
// contribution of its part, combines them once, and writes the result to
// every destination. Everyone reads from and writes to everyone, so both
// barriers address all ranks. Where a clause's contributors or
// destinations are a set, its groups' parts are owned by the set's ranks
// (a sub-group's all-reduce runs inside the group) and the barriers
// address the ranks that share a group.
void twoShot(const Collective &c, Builder &b, bool copy, bool unfused = false,
             bool gather = false) {
  oneRound(c, b, copy, Selection::Owned, DestKind::All, PeerSet::All,
           PeerSet::All, unfused, gather);
}

// Staged: per chunk, a contributor pushes its names into each destination's
// staging slot and notifies it; the destination waits for the chunk from
// every contributor and combines it. Chunks pipeline: pushing chunk c+1
// overlaps combining chunk c. `free` tells a contributor that a destination
// has drained its slots, so the next launch may push again.
void staged(const Collective &c, Builder &b) {
  for (size_t k = 0; k < c.clauses.size(); ++k) {
    if (readsOutput(c, k)) {
      stepRound(c, b, k, Selection::Mine, DestKind::Self, true);
      continue;
    }
    int ck = (int)k;
    std::string sfx = suffix(c, k);
    int data = b.signal("data" + sfx), freed = b.signal("free" + sfx);
    b.stage(ck, StageMode::Push, true);
    b.notify(ck, data, PeerSet::Dsts, true);
    b.wait(ck, data, PeerSet::Srcs, true);
    b.consume(ck, Selection::Mine, SourceKind::Staging, DestKind::Self, true);
    const bool last = k + 1 == c.clauses.size();
    b.notify(ck, freed, PeerSet::Srcs, false, last);
    b.wait(ck, freed, PeerSet::Dsts, false, false, last);
  }
}

// Whether a staged clause is symmetric: for every rank, the ranks it pushes
// to are the ranks it consumes from, and every pair's box has the same
// size (so a rank that pushes to a peer also reads a line of that peer
// in every launch where it pushes). Every-or-coordinate selectors on both
// sides (not a root, a map or a set: a broadcast's root never receives, a
// shift pushes to r + 1 and reads r - 1), with extents that no coordinate
// changes (all_to_all_v's cnt[s][d] may be 0 one way and not the other).
bool symmetricClause(const Collective &c, const Clause &cl) {
  auto plain = [&](const RankSel &s) {
    const RankRole::Kind k = rankRole(c, cl, s).kind;
    return k == RankRole::Every || k == RankRole::Coord;
  };
  if (!plain(cl.from.rank) || !plain(cl.to.rank))
    return false;
  for (const Dim &d : cl.dims)
    for (const Dim &v : cl.dims)
      if (d.extent.mentions(v.name))
        return false;
  for (const Dim &d : cl.dims)
    for (const Param &p : c.params)
      if (p.kind == ParamKind::Table && d.extent.mentions(p.name))
        return false;
  return true;
}

// Staged with the low-latency protocol: a push writes flagged lines (each
// carries the epoch beside its data), and the consume polls those lines,
// so no `data` notify or wait is needed: one pass. `lines`: the line
// format, LL (staged_ll: 16-byte lines, half of each the flag) or LL128
// (staged_ll128: 128-byte lines, 8 bytes of each the flag, released after
// the data).
// A symmetric clause stages by launch parity (`parity`: doubled slots,
// launch e in half e & 1) and has no `free` round: a writer W enters launch
// e + 2 (which writes half e & 1 of destination D) only after its launch
// e + 1, which read D's lines of e + 1; D wrote those in its launch e + 1,
// after its launch e, the last to read that half, had ended. Any other
// clause keeps `free`, which keeps the next launch's pushes from
// overwriting slots not yet read (a boundary sync: one launch orders it).
// Only where every clause of the collective is symmetric (no step, no
// other area): the scratch of a call of other sizes lays areas out
// elsewhere, and only the parity areas' halves stay apart whatever the
// sizes (exec::layoutEnd), so a plan mixing them keeps `free` throughout.
void stagedLL(const Collective &c, Builder &b, LineFormat lines) {
  bool parityAll = true;
  for (size_t k = 0; k < c.clauses.size(); ++k)
    parityAll &= !readsOutput(c, k) && symmetricClause(c, c.clauses[k]);
  for (size_t k = 0; k < c.clauses.size(); ++k) {
    if (readsOutput(c, k)) {
      stepRound(c, b, k, Selection::Mine, DestKind::Self, true);
      continue;
    }
    int ck = (int)k;
    std::string sfx = suffix(c, k);
    const bool parity = parityAll;
    b.stage(ck, StageMode::Push, true, lines, parity);
    b.consume(ck, Selection::Mine, SourceKind::Staging, DestKind::Self, true,
              lines, parity);
    if (parity)
      continue;
    int freed = b.signal("free" + sfx);
    const bool last = k + 1 == c.clauses.size();
    b.notify(ck, freed, PeerSet::Srcs, false, last);
    b.wait(ck, freed, PeerSet::Dsts, false, false, last);
  }
}

bool buildPlan(const Collective &c, const std::string &strategy, int lanes,
               int chunks, Plan &out, std::string &error) {
  out = Plan();
  out.strategy = strategy;
  out.lanes = lanes < 1 ? 1 : lanes;
  out.chunks = 1;
  Builder b{out};
  if (strategy == "direct")
    direct(c, b, false);
  else if (strategy == "direct_copy")
    direct(c, b, true);
  else if (strategy == "two_shot")
    twoShot(c, b, false);
  else if (strategy == "two_shot_copy")
    twoShot(c, b, true);
  else if (strategy == "direct_unfused" || strategy == "direct_copy_unfused" ||
           strategy == "two_shot_unfused" || strategy == "two_shot_gather") {
    bool epilogue = false;
    for (const Clause &cl : c.clauses)
      epilogue |= !cl.epilogue.empty();
    if (!epilogue) {
      error = "strategy '" + strategy + "' runs a clause's epilogue apart from its "
              "combine, but " + c.name + " has no epilogue";
      return false;
    }
    if (strategy == "two_shot_unfused" || strategy == "two_shot_gather")
      twoShot(c, b, false, true, strategy == "two_shot_gather");
    else
      direct(c, b, strategy == "direct_copy_unfused", true);
  }
  else if (strategy == "staged") {
    out.chunks = chunks < 1 ? 1 : chunks;
    staged(c, b);
  } else if (strategy == "staged_ll" || strategy == "staged_ll128") {
    out.chunks = chunks < 1 ? 1 : chunks;
    stagedLL(c, b, strategy == "staged_ll" ? LineFormat::LL : LineFormat::LL128);
  } else {
    error = "unknown strategy '" + strategy + "' (" + strategyList() + ", auto)";
    return false;
  }
  return true;
}

/// Whether every clause has the register steps' shape (exec's
/// pushRegisters and consumeRegisters: every rank's source to every rank,
/// no epilogue), the shape the default low-latency band is for
/// (kDefaultLLBytes).
bool registerShaped(const Collective &c) {
  for (auto &cl : c.clauses)
    if (!cl.from.rank.every || rankRole(c, cl, cl.to.rank).kind != RankRole::Every ||
        !cl.epilogue.empty() || isGeneralClause(c, cl))
      return false;
  return !c.clauses.empty();
}

// Whether two-shot pays for large messages: some clause reduces the
// contributions of every rank into names that every rank receives (combining
// once per name and writing it R times moves fewer bytes than every
// destination combining all contributions itself) or that one rank receives
// (one-shot would leave the combining to that rank's lanes alone; two-shot
// spreads it over every rank's lanes, same bytes). Where each rank receives
// its own names (reduce-scatter), one-shot already spreads the work.
// A set of contributors reduced into a set of destinations or one rank is
// the same inside a group (a sub-group's all-reduce or reduce).
bool twoShotPays(const Collective &c) {
  for (auto &cl : c.clauses) {
    bool reduces = cl.op != RedOp::Copy || !cl.opParam.empty();
    RankRole to = rankRole(c, cl, cl.to.rank);
    if (reduces && (cl.from.rank.every || cl.from.rank.isSet()) &&
        (to.kind == RankRole::Every || to.kind == RankRole::Fixed ||
         to.kind == RankRole::Set))
      return true;
  }
  return false;
}
} // namespace

namespace {
bool choosePlans(const Collective &c, const InferOptions &opts,
                 std::vector<Plan> &plans, std::string &error) {
  plans.clear();
  if (c.clauses.size() > (size_t)limits::kMaxClauses) {
    error = "at most " + std::to_string(limits::kMaxClauses) +
            " clauses per collective are supported";
    return false;
  }
  // An epilogue needs whole rows on the rank that applies it: one-shot,
  // where every rank combines every name it receives, gives it that; so
  // does two-shot, whose owned consume cuts the owners' parts on row
  // boundaries when it runs an epilogue (exec/Epilogue.h,
  // consumeRowsOwned). Staged plans combine in slices: refused.
  bool epilogue = false;
  for (const Clause &cl : c.clauses)
    epilogue |= !cl.epilogue.empty();
  if (epilogue && opts.strategy != "auto" && opts.strategy != "direct" &&
      opts.strategy != "direct_copy" && opts.strategy != "two_shot" &&
      opts.strategy != "two_shot_copy" && opts.strategy != "direct_unfused" &&
      opts.strategy != "direct_copy_unfused" && opts.strategy != "two_shot_unfused" &&
      opts.strategy != "two_shot_gather") {
    error = "strategy '" + opts.strategy + "' cannot run an epilogue; a "
            "collective with an epilogue runs one-shot (direct, direct_copy) "
            "or two-shot with row-aligned owners (two_shot, two_shot_copy), "
            "fused, or apart from the combine (direct_unfused, "
            "direct_copy_unfused, two_shot_unfused, two_shot_gather)";
    return false;
  }
  // A strategy by name: the lanes and chunks asked, else its defaults.
  // staged_ll is for small messages: no pipeline by default, more lanes
  // (H200, 8 KiB all-reduce on 8 ranks: 4 lanes x 4 chunks 45 us, 8 lanes
  // x 1 chunk 12 us; docs/performance.md). staged_ll128 is for mid sizes:
  // no pipeline either (a consume starts on each line as its flag lands,
  // so chunks would only add steps), and the large plans' 16 lanes, so
  // that more warps have lines in flight; not measured yet.
  auto named = [&](const std::string &s, Plan &p) {
    const bool ll = s == "staged_ll", ll128 = s == "staged_ll128";
    return buildPlan(c, s, opts.lanes ? opts.lanes : ll ? 8 : ll128 ? 16 : 4,
                     opts.chunks ? opts.chunks : ll || ll128 ? 1 : 4, p, error);
  };
  if (opts.strategy != "auto") {
    Plan p;
    if (!named(opts.strategy, p))
      return false;
    plans.push_back(p);
    return true;
  }
  // The default chooser, by bytes per rank of the largest buffer:
  //  small: one-shot on few lanes (latency: two barriers, one launch);
  //  large: two-shot where a reduction goes to many ranks (fewest bytes),
  //         otherwise one-shot on many lanes (each byte read once).
  // In-place calls get the copy variants (or staged) of the same band.
  // With an epilogue: one-shot below epilogueSmallBytes, two-shot with
  // row-aligned owners from it on (spec/Plan.h's kDefaultEpilogueSmallBytes
  // says why).
  const int64_t small = epilogue ? opts.epilogueSmallBytes : opts.smallBytes;
  int smallLanes = opts.lanes ? opts.lanes : 8;
  int largeLanes = opts.lanes ? opts.lanes : 16;
  // A plan built (`built`: its build went well) into the set, with its band
  // and launch model.
  auto inBand = [&](bool built, Plan &p, int64_t lo, int64_t hi, bool several) {
    if (!built)
      return false;
    p.minBytes = lo;
    p.maxBytes = hi;
    p.severalLaunches = several;
    plans.push_back(p);
    return true;
  };
  auto build = [&](const std::string &s, int lanes, int64_t lo, int64_t hi) {
    Plan p;
    return inBand(buildPlan(c, s, lanes, opts.chunks ? opts.chunks : 4, p, error), p,
                  lo, hi, false);
  };
  // The unfused band (an epilogue, epilogueUnfusedBytes > 0): from that
  // many bytes on, the unfused forms of the same strategies; below it, the
  // fused ones. A band that the edge leaves empty is not emitted. In place
  // with each output at its input's address, two_shot_unfused is right as
  // it is (inplace_same: each owner reads and writes its own rows), so
  // two_shot_copy has no unfused form of its own and keeps its whole band:
  // a call whose buffers overlap otherwise takes it (the runtime's
  // provedInPlace); one-shot in place reads copies (direct_copy_unfused).
  const int64_t apart = epilogue ? opts.epilogueUnfusedBytes : 0;
  // unfusedLanes: the unfused form's (0: lanes).
  auto add = [&](const std::string &s, int lanes, int64_t lo, int64_t hi,
                 int unfusedLanes = 0) {
    // two_shot_copy has no unfused form: it keeps its whole band, so that
    // a large call whose buffers overlap otherwise than at the same start
    // takes it rather than the one-shot copy plan.
    if (apart <= 0 || s == "two_shot_copy")
      return build(s, lanes, lo, hi);
    const int64_t fhi = hi < 0 || hi > apart ? apart : hi;
    if (lo < fhi && !build(s, lanes, lo, fhi))
      return false;
    const int64_t ulo = lo > apart ? lo : apart;
    if (hi >= 0 && ulo >= hi)
      return true;
    return build(s == "direct"        ? "direct_unfused"
                 : s == "direct_copy" ? "direct_copy_unfused"
                                      : "two_shot_unfused",
                 unfusedLanes ? unfusedLanes : lanes, ulo, hi);
  };
  bool two = twoShotPays(c) || epilogue;
  if (small < 0) {
    error = "small-bytes must not be negative, got " + std::to_string(small);
    return false;
  }
  if (opts.llBytes < 0 && opts.llBytes != kAutoLLBytes) {
    error = "ll-bytes must not be negative, got " + std::to_string(opts.llBytes);
    return false;
  }
  // The default LL band: for the register steps' shape, and not where an
  // LL128 band was asked without one (that band then starts at 0, as
  // before the default).
  const int64_t llBytes = opts.llBytes != kAutoLLBytes ? opts.llBytes
                          : opts.ll128Bytes == 0 && registerShaped(c) ? kDefaultLLBytes
                                                                      : 0;
  if (opts.epilogueUnfusedBytes < 0) {
    error = "epilogue-unfused-bytes must not be negative, got " +
            std::to_string(opts.epilogueUnfusedBytes);
    return false;
  }
  if (opts.ll128Bytes < 0 || (opts.ll128Bytes > 0 && opts.ll128Bytes <= llBytes)) {
    error = "ll128-bytes must be 0 or exceed ll-bytes (" +
            std::to_string(llBytes) + "), got " + std::to_string(opts.ll128Bytes);
    return false;
  }
  // The low-latency band (llBytes > 0), first so that it wins its sizes:
  // staged_ll (its defaults as asked by name), for calls whose ranks
  // run in several launches only, where each launch boundary's barrier
  // costs more than flags carried with the data; a call in one launch
  // skips it (the runtime's chooser). Not for an epilogue (staged plans
  // combine in slices).
  // Then the LL128 band (ll128Bytes > 0): staged_ll128 from llBytes up to
  // ll128Bytes, for such calls only, the same way.
  auto lowLatency = [&](const std::string &s, int64_t lo, int64_t hi) {
    Plan p;
    return inBand(named(s, p), p, lo, hi, true);
  };
  if (!epilogue && ((llBytes > 0 && !lowLatency("staged_ll", 0, llBytes)) ||
                    (opts.ll128Bytes > 0 &&
                     !lowLatency("staged_ll128", llBytes, opts.ll128Bytes))))
    return false;
  // small-bytes 0: no size is small, so no one-shot band; the large plans
  // take every size.
  if (small == 0)
    return add(two ? "two_shot" : "direct", largeLanes, 0, -1) &&
           add(two ? "two_shot_copy" : "direct_copy", largeLanes, 0, -1);
  // One-shot with an epilogue: more lanes, run only where they have rows
  // (kDefaultEpilogueDirectLanes); its unfused form, whose lanes all run,
  // keeps the small band's.
  const int directLanes = epilogue && !opts.lanes ? kDefaultEpilogueDirectLanes : smallLanes;
  // Its band out of place (epilogueDirectBytes); the copy plans' in place
  // is `small`'s.
  const int64_t directEdge =
      !epilogue ? small
      : opts.epilogueDirectBytes != kAutoEpilogueDirectBytes ? opts.epilogueDirectBytes
      : small == kDefaultEpilogueSmallBytes ? kDefaultEpilogueDirectBytes
                                             : small;
  if (directEdge < 0) {
    error = "epilogue-direct-bytes must be -1 or not negative, got " +
            std::to_string(directEdge);
    return false;
  }
  // In place, below the edge: with an epilogue, the unfused one-shot, which
  // stores its outputs only after every peer has read its inputs (its
  // `done`: oneRound), so it needs no copy of them; out of place it ran
  // 1.3-1.5x faster than direct_copy in place, which copies the inputs and
  // waits on every lane of every rank (docs/performance.md, twenty-fourth
  // session). Where the unfused edge cuts into the band (--epilogue-
  // unfused-bytes below --epilogue-small-bytes; 0: no unfused plan), the
  // copy plans as before.
  const bool applyInPlace = epilogue && apart >= small;
  // The large band starts where the in-place one-shot's ends when that is
  // first (the out-of-place edge above `small`, as by default): from
  // `small` to directEdge both bands hold a call, and the first plan in
  // the set, `direct`, takes it out of place, while in place at the same
  // address the fused two-shot (inplace_same) does, not the two-shot copy
  // plan. Measured in place at 512 KiB (H100, twenty-fifth session): 16.19
  // us (two_shot) against 24.63 (two_shot_copy) at 64 x 4096, 23.64
  // against 32.71 at 32 x 8192.
  const int64_t largeFrom = epilogue && small < directEdge ? small : directEdge;
  // With an epilogue, the unfused plans (epilogueUnfusedBytes > 0) and the
  // wide rows' band (epilogueWideRows > 0), two_shot_gather last: the rows
  // band rowsBands gives it (wide rows), and a byte band from `small` on
  // that only the calls no plan before it takes reach (it is proved right
  // for any overlap and copies nothing: in place otherwise than at the
  // same address, the large calls that would copy their inputs for
  // two_shot_copy).
  return add("direct", directLanes, 0, directEdge, smallLanes) &&
         add(two ? "two_shot" : "direct", largeLanes, largeFrom, -1) &&
         (applyInPlace ? build("direct_unfused", smallLanes, 0, small)
                       : add("direct_copy", smallLanes, 0, small)) &&
         add(two ? "two_shot_copy" : "direct_copy", largeLanes, small, -1) &&
         (apart <= 0 || opts.epilogueWideRows <= 0 ||
          build("two_shot_gather", largeLanes, small, -1));
}

/// The default chooser's rows bands (a collective with an epilogue; spec/
/// Plan.h, kDefaultEpilogueWideRows and kDefaultEpilogueUnfusedRows): the
/// edges that the row's width moves, on the plans the byte bands built.
/// A call in a plan's rows band takes it before the plans whose byte band
/// holds it (the runtime's choosePlan).
void rowsBands(const InferOptions &opts, std::vector<Plan> &plans) {
  auto find = [&](const char *s) -> Plan * {
    for (Plan &p : plans)
      if (p.strategy == s)
        return &p;
    return nullptr;
  };
  Plan *direct = find("direct"), *apart = find("direct_unfused"),
       *twoApart = find("two_shot_unfused"), *gather = find("two_shot_gather");
  if (opts.epilogueWideRows > 0 && direct) {
    // The single row: the unfused one-shot where the set has it (the
    // in-place band's); the fused one from 2 rows.
    const bool one = apart != nullptr;
    if (one) {
      apart->minRows = 0;
      apart->maxRows = 2;
      apart->minRowElems = kEpilogueWideElems + 1;
      apart->maxRowElems = -1;
    }
    if (!one || opts.epilogueWideRows > 1) {
      direct->minRows = one ? 2 : 0;
      direct->maxRows = opts.epilogueWideRows + 1;
      direct->minRowElems = kEpilogueWideElems + 1;
      direct->maxRowElems = -1;
    }
  }
  if (opts.epilogueUnfusedRows > 0 && twoApart) {
    twoApart->minRows = opts.epilogueUnfusedRows;
    twoApart->maxRows = -1;
    twoApart->minRowElems = kEpilogueUnfusedRowElems;
    twoApart->maxRowElems = kEpilogueWideElems + 1;
  }
  // From 2 rows the gathered two-shot: out of place after the fused
  // one-shot's band (that plan comes first in the set and takes 2 to
  // epilogueWideRows rows), in place from 2 rows (the fused one-shot is not
  // proved right there). The single row stays with the plans before it
  // (by default the unfused one-shot's rows band).
  if (opts.epilogueWideRows > 0 && gather) {
    gather->minRows = 2;
    gather->maxRows = -1;
    gather->minRowElems = kEpilogueWideElems + 1;
    gather->maxRowElems = -1;
  }
}

} // namespace

bool inferPlans(const Collective &c, const InferOptions &opts,
                std::vector<Plan> &plans, std::string &error) {
  if (opts.epilogueWideRows < 0 || opts.epilogueUnfusedRows < 0) {
    error = std::string(opts.epilogueWideRows < 0 ? "epilogue-wide-rows"
                                                  : "epilogue-unfused-rows") +
            " must not be negative (0: no such band), got " +
            std::to_string(opts.epilogueWideRows < 0 ? opts.epilogueWideRows
                                                     : opts.epilogueUnfusedRows);
    return false;
  }
  if (!choosePlans(c, opts, plans, error))
    return false;
  bool epilogue = false;
  for (const Clause &cl : c.clauses)
    epilogue |= !cl.epilogue.empty();
  if (epilogue && opts.strategy == "auto")
    rowsBands(opts, plans);
  // Every consume of a clause with an epilogue goes through it, but one
  // that keeps the rows for a later one (to received: the unfused plans).
  for (Plan &p : plans)
    for (Step &st : p.steps)
      st.epilogue = st.kind == StepKind::Consume && st.dst != DestKind::Received &&
                    !c.clauses[st.clause].epilogue.empty();
  return true;
}

} // namespace purlin
