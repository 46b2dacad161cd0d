// What a plan's steps become in the executor: the chunk-loop structure, the
// arguments of each exec.h call and the scratch layout order. Shared by
// Codegen (which prints the calls) and the checker (which makes them), so
// that the checker proves what the targets run.
#include "purlin/Plan/Plan.h"

#include "purlin/spec/Exec.h"

namespace purlin {

std::vector<StepRun> stepRuns(const Plan &p) {
  std::vector<StepRun> runs;
  for (size_t i = 0; i < p.steps.size();) {
    StepRun r;
    r.begin = i;
    r.chunked = p.steps[i].chunked;
    while (i < p.steps.size() && p.steps[i].chunked == r.chunked &&
           (r.chunked || i == r.begin))
      ++i;
    r.end = i;
    runs.push_back(r);
  }
  return runs;
}

ExecArgs execArgs(const Step &st) {
  ExecArgs a;
  a.peers = st.peers == PeerSet::All    ? exec::kPeersAll
            : st.peers == PeerSet::Srcs ? exec::kPeersSrcs
            : st.peers == PeerSet::Dsts ? exec::kPeersDsts
            : st.peers == PeerSet::Group ? exec::kPeersGroup
                                        : exec::kPeersSelf;
  a.sel = st.sel == Selection::Mine ? exec::kSelMine : exec::kSelOwned;
  switch (st.src) {
  case SourceKind::Input: a.src = exec::kSrcInput; break;
  case SourceKind::Scratch: a.src = exec::kSrcScratch; break;
  case SourceKind::Staging: a.src = exec::kSrcStaging; break;
  case SourceKind::Partial: a.src = exec::kSrcPartial; break;
  case SourceKind::Output: a.src = exec::kSrcOutput; break;
  case SourceKind::Received: a.src = exec::kSrcReceived; break;
  case SourceKind::Owners: a.src = exec::kSrcOwners; break;
  }
  switch (st.dst) {
  case DestKind::Self: a.dst = exec::kDstSelf; break;
  case DestKind::All: a.dst = exec::kDstAll; break;
  case DestKind::Partial: a.dst = exec::kDstPartial; break;
  case DestKind::Received: a.dst = exec::kDstReceived; break;
  }
  a.lo = st.ranksLo;
  a.hi = st.ranksHi < 0 ? exec::kMaxRanks : st.ranksHi;
  switch (st.kind) {
  case StepKind::Notify:
  case StepKind::Wait:
    a.flags = (st.allLanes ? exec::kAllLanes : 0) |
              (st.boundary ? exec::kBoundary : 0);
    break;
  case StepKind::Stage:
  case StepKind::Consume:
    a.flags = lineFlags(st.lines) | (st.flagged() && st.parity ? exec::kParity : 0);
    break;
  }
  return a;
}

std::vector<ScratchArea> scratchAreas(const Collective &c, const Plan &p) {
  std::vector<ScratchArea> out;
  std::vector<bool> copied(c.buffers.size(), false), pushed(c.clauses.size(), false),
      partial(c.clauses.size(), false), received(c.clauses.size(), false);
  for (auto &st : p.steps) {
    if (st.clause < 0 || st.clause >= (int)c.clauses.size())
      continue;
    const int b = c.bufferIndex(c.clauses[st.clause].from.buffer);
    if (st.kind == StepKind::Consume && st.dst == DestKind::Partial &&
        !partial[st.clause]) {
      partial[st.clause] = true;
      out.push_back({ScratchArea::Partial, st.clause, LineFormat::None});
    }
    if (st.kind == StepKind::Consume && st.dst == DestKind::Received &&
        !received[st.clause]) {
      received[st.clause] = true;
      out.push_back({ScratchArea::Received, st.clause, LineFormat::None});
    }
    if (st.kind != StepKind::Stage)
      continue;
    if (st.stage == StageMode::Copy && b >= 0 && !copied[b]) {
      copied[b] = true;
      out.push_back({ScratchArea::Copy, b, LineFormat::None});
    }
    if (st.stage == StageMode::Push && !pushed[st.clause]) {
      pushed[st.clause] = true;
      out.push_back({ScratchArea::Slots, st.clause, st.lines, st.flagged() && st.parity});
    }
  }
  return out;
}

} // namespace purlin
