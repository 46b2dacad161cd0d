#include "purlin/Dialect/Snac/Convert.h"

using namespace mlir;

namespace purlin {
namespace snac {

namespace {
// A step's `flagged` attribute as the spec's line format (the enums agree
// value for value: SnacDialect.cpp's static_asserts).
purlin::LineFormat linesOf(std::optional<LineFormat> f) {
  return f ? (purlin::LineFormat)*f : purlin::LineFormat::None;
}
} // namespace

ProgramOp importPlan(OpBuilder &b, Location loc, StringRef name,
                     StringRef collective, const Plan &p) {
  auto prog = b.create<ProgramOp>(
      loc, b.getStringAttr(name), FlatSymbolRefAttr::get(b.getContext(), collective),
      b.getStringAttr(p.strategy), b.getI64IntegerAttr(p.lanes),
      b.getI64IntegerAttr(p.chunks), b.getI64IntegerAttr(p.minBytes),
      b.getI64IntegerAttr(p.maxBytes),
      p.severalLaunches ? b.getUnitAttr() : UnitAttr(),
      p.inplaceSafe ? b.getUnitAttr() : UnitAttr(),
      p.inplaceSame ? b.getUnitAttr() : UnitAttr(),
      (p.inplaceSafe || p.inplaceSame) && p.inplaceMaxRanks > 0
          ? b.getI64IntegerAttr(p.inplaceMaxRanks)
          : IntegerAttr(),
      p.maxRows != 0 ? b.getI64IntegerAttr(p.minRows) : IntegerAttr(),
      p.maxRows != 0 ? b.getI64IntegerAttr(p.maxRows) : IntegerAttr(),
      p.maxRows != 0 ? b.getI64IntegerAttr(p.minRowElems) : IntegerAttr(),
      p.maxRows != 0 ? b.getI64IntegerAttr(p.maxRowElems) : IntegerAttr(),
      p.maxRows != 0 && p.maxRowsInPlace != 0 ? b.getI64IntegerAttr(p.maxRowsInPlace)
                                              : IntegerAttr());
  Block *body = new Block();
  prog.getBody().push_back(body);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToEnd(body);
  for (auto &s : p.signals)
    b.create<SignalOp>(loc, b.getStringAttr(s));
  ChunksOp chunks;
  for (const Step &st : p.steps) {
    if (st.chunked && !chunks) {
      b.setInsertionPointToEnd(body);
      chunks = b.create<ChunksOp>(loc);
      chunks.getBody().push_back(new Block());
      b.setInsertionPointToEnd(&chunks.getBody().front());
    } else if (!st.chunked && chunks) {
      chunks = ChunksOp();
      b.setInsertionPointToEnd(body);
    }
    auto clause = b.getI64IntegerAttr(st.clause);
    const LineFormatAttr lines =
        st.flagged() ? LineFormatAttr::get(b.getContext(), (LineFormat)st.lines)
                     : LineFormatAttr();
    const UnitAttr parity = st.parity ? b.getUnitAttr() : UnitAttr();
    switch (st.kind) {
    case StepKind::Stage:
      b.create<StageOp>(loc, StageModeAttr::get(b.getContext(), (StageMode)st.stage),
                        clause, lines, parity);
      break;
    case StepKind::Notify:
      b.create<NotifyOp>(loc, FlatSymbolRefAttr::get(b.getContext(), p.signals[st.signal]),
                         PeerSetAttr::get(b.getContext(), (PeerSet)st.peers), clause,
                         st.boundary ? b.getUnitAttr() : UnitAttr());
      break;
    case StepKind::Wait:
      b.create<WaitOp>(loc, FlatSymbolRefAttr::get(b.getContext(), p.signals[st.signal]),
                       PeerSetAttr::get(b.getContext(), (PeerSet)st.peers), clause,
                       st.allLanes ? b.getUnitAttr() : UnitAttr(),
                       st.boundary ? b.getUnitAttr() : UnitAttr());
      break;
    case StepKind::Consume: {
      const bool ranks = st.ranksLo != 0 || st.ranksHi >= 0;
      b.create<ConsumeOp>(loc, SelectionAttr::get(b.getContext(), (Selection)st.sel),
                          SourceAttr::get(b.getContext(), (Source)st.src),
                          DestAttr::get(b.getContext(), (Dest)st.dst), clause,
                          lines, parity,
                          ranks ? b.getI64IntegerAttr(st.ranksLo) : IntegerAttr(),
                          ranks ? b.getI64IntegerAttr(st.ranksHi) : IntegerAttr(),
                          st.epilogue ? b.getUnitAttr() : UnitAttr());
      break;
    }
    }
  }
  return prog;
}

LogicalResult exportPlan(ProgramOp op, Plan &out,
                         SmallVectorImpl<Operation *> &steps) {
  out = Plan();
  out.strategy = op.getStrategy().str();
  out.lanes = (int)op.getLanes();
  out.chunks = (int)op.getChunks();
  out.minBytes = op.getMinBytes();
  out.maxBytes = op.getMaxBytes();
  out.severalLaunches = op.getSeveralLaunches();
  out.inplaceSafe = op.getInplaceSafe();
  out.inplaceSame = op.getInplaceSame() || op.getInplaceSafe();
  out.inplaceMaxRanks = (int)op.getInplaceMaxRanks().value_or(0);
  if (op.getMaxRows()) {
    out.minRows = (int64_t)*op.getMinRows();
    out.maxRows = (int64_t)*op.getMaxRows();
    out.minRowElems = (int64_t)*op.getMinRowElems();
    out.maxRowElems = (int64_t)*op.getMaxRowElems();
    out.maxRowsInPlace = (int64_t)op.getMaxRowsInPlace().value_or(0);
  }
  llvm::StringMap<int> sigIndex;
  for (Operation &o : op.getBodyBlock())
    if (auto s = dyn_cast<SignalOp>(o)) {
      sigIndex[s.getSymName()] = (int)out.signals.size();
      out.signals.push_back(s.getSymName().str());
    }
  std::function<LogicalResult(Block &, bool)> walk = [&](Block &blk,
                                                          bool chunked) {
    for (Operation &o : blk) {
      if (auto c = dyn_cast<ChunksOp>(o)) {
        if (chunked)
          return o.emitOpError("chunk loops do not nest"), failure();
        if (failed(walk(c.getBody().front(), true)))
          return failure();
        continue;
      }
      if (isa<SignalOp>(o))
        continue;
      Step st;
      st.chunked = chunked;
      st.loc.tag = (int)steps.size();
      if (auto s = dyn_cast<StageOp>(o)) {
        st.kind = StepKind::Stage;
        st.clause = (int)s.getClause();
        st.stage = (purlin::StageMode)s.getMode();
        st.lines = linesOf(s.getFlagged());
        st.parity = s.getParity();
      } else if (auto n = dyn_cast<NotifyOp>(o)) {
        st.kind = StepKind::Notify;
        st.clause = (int)n.getClause();
        st.signal = sigIndex.lookup(n.getSignal());
        st.peers = (purlin::PeerSet)n.getPeers();
        st.boundary = n.getBoundary();
      } else if (auto w = dyn_cast<WaitOp>(o)) {
        st.kind = StepKind::Wait;
        st.clause = (int)w.getClause();
        st.signal = sigIndex.lookup(w.getSignal());
        st.peers = (purlin::PeerSet)w.getPeers();
        st.allLanes = w.getAllLanes();
        st.boundary = w.getBoundary();
      } else if (auto c = dyn_cast<ConsumeOp>(o)) {
        st.kind = StepKind::Consume;
        st.clause = (int)c.getClause();
        st.sel = (purlin::Selection)c.getSel();
        st.src = (purlin::SourceKind)c.getSrc();
        st.dst = (purlin::DestKind)c.getDst();
        st.lines = linesOf(c.getFlagged());
        st.parity = c.getParity();
        st.epilogue = c.getEpilogue();
        st.ranksLo = (int)c.getRanksLo().value_or(0);
        st.ranksHi = (int)c.getRanksHi().value_or(-1);
      } else {
        return o.emitOpError("unexpected op in a snac.program"), failure();
      }
      steps.push_back(&o);
      out.steps.push_back(st);
    }
    return success();
  };
  return walk(op.getBodyBlock(), false);
}

} // namespace snac
} // namespace purlin
