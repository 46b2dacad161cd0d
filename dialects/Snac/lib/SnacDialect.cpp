#include "purlin/Dialect/Snac/SnacOps.h"
#include "purlin/Dialect/Layout/LayoutOps.h"
#include "purlin/spec/Plan.h"
#include "purlin/spec/Vocabulary.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

using namespace mlir;
using namespace purlin::snac;

// `ranks [lo, hi)`: hi is an integer, or `R` (stored as -1) for every rank.
static mlir::ParseResult parseRankBound(mlir::OpAsmParser &p, mlir::IntegerAttr &hi) {
  if (succeeded(p.parseOptionalKeyword("R"))) {
    hi = p.getBuilder().getI64IntegerAttr(-1);
    return mlir::success();
  }
  int64_t v;
  if (p.parseInteger(v))
    return mlir::failure();
  hi = p.getBuilder().getI64IntegerAttr(v);
  return mlir::success();
}
static void printRankBound(mlir::OpAsmPrinter &p, mlir::Operation *, mlir::IntegerAttr hi) {
  if (!hi || hi.getInt() < 0)
    p << "R";
  else
    p << hi.getInt();
}

// `flagged [FORMAT]`: the line format of a flagged step, absent where the
// step is not flagged; `flagged` alone is `ll` (what `flagged` has always
// meant), so only another format is printed after it. Then `parity`
// (staging by launch parity), which the verifiers allow on flagged steps
// only; it is parsed alone too, so that they can say so.
static mlir::ParseResult parseFlagged(mlir::OpAsmParser &p, LineFormatAttr &fmt,
                                      mlir::UnitAttr &parity) {
  if (succeeded(p.parseOptionalKeyword("flagged"))) {
    LineFormat f = LineFormat::ll;
    llvm::StringRef kw;
    if (succeeded(p.parseOptionalKeyword(
            &kw, {stringifyLineFormat(LineFormat::ll), stringifyLineFormat(LineFormat::ll128)})))
      f = *symbolizeLineFormat(kw);
    fmt = LineFormatAttr::get(p.getContext(), f);
  }
  if (succeeded(p.parseOptionalKeyword("parity")))
    parity = mlir::UnitAttr::get(p.getContext());
  return mlir::success();
}
static void printFlagged(mlir::OpAsmPrinter &p, mlir::Operation *, LineFormatAttr fmt,
                         mlir::UnitAttr parity) {
  if (fmt) {
    p << "flagged";
    if (fmt.getValue() != LineFormat::ll)
      p << " " << stringifyLineFormat(fmt.getValue());
  }
  if (parity)
    p << (fmt ? " parity" : "parity");
}

#include "purlin/Dialect/Snac/SnacDialect.cpp.inc"
#include "purlin/Dialect/Snac/SnacEnums.cpp.inc"

// The ODS enums are the spec's vocabulary (purlin/spec/Vocabulary.h), value
// for value: the conversions to and from plain plans cast between them, and
// the names are checked by the tests that round-trip programs.
#define PURLIN_SAME(E, SPEC, ODS)                                              \
  static_assert((int)E::ODS == (int)::purlin::E::SPEC, "snac." #E " drifted")
PURLIN_SAME(StageMode, Expose, expose);
PURLIN_SAME(StageMode, Copy, copy);
PURLIN_SAME(StageMode, Push, push);
PURLIN_SAME(PeerSet, All, all);
PURLIN_SAME(PeerSet, Srcs, srcs);
PURLIN_SAME(PeerSet, Dsts, dsts);
PURLIN_SAME(PeerSet, Group, group);
PURLIN_SAME(PeerSet, Self, self);
PURLIN_SAME(Selection, Mine, mine);
PURLIN_SAME(Selection, Owned, owned);
PURLIN_SAME(LineFormat, LL, ll);
PURLIN_SAME(LineFormat, LL128, ll128);
#undef PURLIN_SAME
static_assert((int)Source::input == (int)::purlin::SourceKind::Input &&
                  (int)Source::scratch == (int)::purlin::SourceKind::Scratch &&
                  (int)Source::staging == (int)::purlin::SourceKind::Staging &&
                  (int)Source::partial == (int)::purlin::SourceKind::Partial &&
                  (int)Source::output == (int)::purlin::SourceKind::Output &&
                  (int)Source::received == (int)::purlin::SourceKind::Received &&
                  (int)Source::owners == (int)::purlin::SourceKind::Owners,
              "snac.Source drifted");
static_assert((int)Dest::self == (int)::purlin::DestKind::Self &&
                  (int)Dest::all == (int)::purlin::DestKind::All &&
                  (int)Dest::partial == (int)::purlin::DestKind::Partial &&
                  (int)Dest::received == (int)::purlin::DestKind::Received,
              "snac.Dest drifted");

void SnacDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "purlin/Dialect/Snac/Snac.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "purlin/Dialect/Snac/Snac.cpp.inc"

namespace {
ProgramOp programOf(Operation *op) {
  return op->getParentOfType<ProgramOp>();
}

// The number of name clauses of the collective a program is for, or -1
// when the collective cannot be found (a program may stand alone in tests).
int64_t clauseCount(ProgramOp prog) {
  Operation *parent = prog->getParentOp();
  auto coll = parent ? mlir::SymbolTable::lookupNearestSymbolFrom<
                           purlin::layout::CollectiveOp>(parent, prog.getCollectiveAttr())
                     : purlin::layout::CollectiveOp();
  if (!coll)
    return -1;
  int64_t n = 0;
  for (Operation &op : coll.getBodyBlock())
    n += isa<purlin::layout::NamesOp>(op);
  return n;
}

LogicalResult checkClause(Operation *op, int64_t clause) {
  ProgramOp prog = programOf(op);
  if (clause < 0)
    return op->emitOpError("clause must not be negative");
  int64_t n = prog ? clauseCount(prog) : -1;
  if (n >= 0 && clause >= n)
    return op->emitOpError("clause ") << clause << " out of range: @"
           << prog.getCollective() << " has " << n << " name clause(s)";
  return success();
}

LogicalResult checkSignal(Operation *op, FlatSymbolRefAttr sig,
                          int64_t clause) {
  ProgramOp prog = programOf(op);
  if (!prog || !mlir::SymbolTable::lookupSymbolIn(prog, sig.getAttr()))
    return op->emitOpError("unknown signal ") << sig;
  return checkClause(op, clause);
}
} // namespace

LogicalResult ProgramOp::verify() {
  // I64Attr getters return uint64_t: compare as signed values.
  int64_t lanes = getLanes(), chunks = getChunks();
  int64_t minBytes = getMinBytes(), maxBytes = getMaxBytes();
  if (lanes < 1 || lanes > 1024)
    return emitOpError("lanes must lie in [1, 1024], got ") << lanes;
  if (chunks < 1 || chunks > 64)
    return emitOpError("chunks must lie in [1, 64], got ") << chunks;
  if (minBytes < 0 || (maxBytes >= 0 && maxBytes <= minBytes))
    return emitOpError("band [") << minBytes << ", " << maxBytes
                                 << ") is empty";
  // The rows band: all four parts (the assembly form gives them together).
  if (getMinRows() || getMaxRows() || getMinRowElems() || getMaxRowElems()) {
    if (!getMinRows() || !getMaxRows() || !getMinRowElems() || !getMaxRowElems())
      return emitOpError("a rows band needs min_rows, max_rows, min_row_elems "
                         "and max_row_elems");
    const int64_t lo = (int64_t)*getMinRows(), hi = (int64_t)*getMaxRows(),
                  elo = (int64_t)*getMinRowElems(), ehi = (int64_t)*getMaxRowElems();
    if (lo < 0 || hi == 0 || (hi > 0 && hi <= lo) || hi < -1)
      return emitOpError("rows band [") << lo << ", " << hi << ") is empty";
    if (elo < 0 || (ehi >= 0 && ehi <= elo) || ehi < -1)
      return emitOpError("rows band's elems [") << elo << ", " << ehi << ") is empty";
  }
  if (auto ip = getMaxRowsInPlace()) {
    const int64_t n = (int64_t)*ip, hi = getMaxRows() ? (int64_t)*getMaxRows() : 0;
    if (!getMaxRows())
      return emitOpError("'in_place_rows' ends a rows band: give 'rows' too");
    if (hi < 0 ? n != -1 : !(n == -1 || n > hi))
      return emitOpError("'in_place_rows' ") << n << " must exceed the band's end " << hi
                                              << " (or be -1: no limit)";
  }
  // The runtime and the generated plan table name plans by strategy: only
  // the strategies inference knows.
  if (!llvm::is_contained(::purlin::strategyNames(), getStrategy().str()))
    return emitOpError("unknown strategy '")
           << getStrategy() << "' (" << ::purlin::strategyList() << ")";
  if (getInplaceSafe() && getInplaceSame())
    return emitOpError("'inplace_same' is implied by 'inplace_safe': give one");
  if (auto n = getInplaceMaxRanks()) {
    if (!getInplaceSafe() && !getInplaceSame())
      return emitOpError("'inplace_max_ranks' bounds an in-place proof: give "
                         "'inplace_safe' or 'inplace_same'");
    if ((int64_t)*n < 1)
      return emitOpError("'inplace_max_ranks' must be at least 1, got ")
             << (int64_t)*n;
  }
  Operation *parent = getOperation()->getParentOp();
  auto coll = parent ? mlir::SymbolTable::lookupNearestSymbolFrom<
                           purlin::layout::CollectiveOp>(parent, getCollectiveAttr())
                     : purlin::layout::CollectiveOp();
  if (!coll)
    return emitOpError("no layout.collective named ") << getCollectiveAttr();
  return success();
}

LogicalResult StageOp::verify() {
  if (getFlagged() && getMode() != StageMode::push)
    return emitOpError("only a push stage writes flagged lines");
  if (getParity() && !getFlagged())
    return emitOpError("'parity' (staging by launch parity) needs flagged "
                       "lines: only a line's flag tells this launch's data "
                       "from a stale launch's in the same half");
  return checkClause(*this, getClause());
}
LogicalResult NotifyOp::verify() {
  return checkSignal(*this, getSignalAttr(), getClause());
}
LogicalResult WaitOp::verify() {
  return checkSignal(*this, getSignalAttr(), getClause());
}
LogicalResult ConsumeOp::verify() {
  if (getSel() == Selection::mine && getDst() == Dest::all)
    return emitOpError("a consume of the names a rank receives ('mine') "
                       "writes to 'self', 'partial' or 'received'");
  if (getSel() == Selection::owned &&
      (getSrc() == Source::staging || getSrc() == Source::output))
    return emitOpError("a consume of owned parts reads inputs, scratch or "
                       "partial results");
  if (getSrc() == Source::output && getDst() != Dest::self)
    return emitOpError("a consume from owners' outputs writes to 'self'");
  if (getFlagged() && getSrc() != Source::staging)
    return emitOpError("only a consume from staging reads flagged lines");
  if (getParity() && !getFlagged())
    return emitOpError("'parity' (staging by launch parity) needs flagged "
                       "lines: only a line's flag tells this launch's data "
                       "from a stale launch's in the same half");
  // The unfused plans: a consume 'to received' keeps the combined rows
  // (f32) of a clause with an epilogue in this rank's area, one 'from
  // received' runs the epilogue over them later (exec/Epilogue.h): this
  // rank's rows ('mine' to 'self'), or the rows it owns, storing every
  // rank's outputs ('owned' to 'all').
  if (getDst() == Dest::received &&
      (getEpilogue() || getFlagged() || getRanksLo() ||
       (getSrc() != Source::input && getSrc() != Source::scratch)))
    return emitOpError("a consume 'to received' keeps whole combined rows for "
                       "a later epilogue: from 'input' or 'scratch', every "
                       "contributor, without 'epilogue'");
  // The gathered apply (two_shot_gather): each rank runs the epilogue over
  // its own rows, each row read from the area of its owner, which kept it
  // ('owned ... to received').
  if (getSrc() == Source::owners &&
      (getSel() != Selection::mine || getDst() != Dest::self || !getEpilogue() ||
       getRanksLo()))
    return emitOpError("a consume 'from owners' runs the epilogue over this "
                       "rank's rows, read from their owners' received areas: "
                       "'mine' to 'self', with 'epilogue', every contributor");
  if (getSrc() == Source::received &&
      (!((getSel() == Selection::mine && getDst() == Dest::self) ||
         (getSel() == Selection::owned && getDst() == Dest::all)) ||
       !getEpilogue() || getRanksLo()))
    return emitOpError("a consume 'from received' runs the epilogue over the "
                       "rows this rank kept: 'mine' to 'self' or 'owned' to "
                       "'all', with 'epilogue', every contributor");
  // An epilogue needs whole rows on the rank that applies it: one-shot
  // ('mine' to 'self'), or the owned form whose owners are cut on row
  // boundaries and store every rank's outputs ('owned' to 'all').
  if (getEpilogue() && getSrc() != Source::received && getSrc() != Source::owners &&
      (!((getSel() == Selection::mine && getDst() == Dest::self) ||
         (getSel() == Selection::owned && getDst() == Dest::all)) ||
       (getSrc() != Source::input && getSrc() != Source::scratch) ||
       getRanksLo()))
    return emitOpError("an epilogue runs in a consume of whole rows: 'mine' "
                       "to 'self' or 'owned' to 'all', from 'input' or "
                       "'scratch', every contributor");
  if (auto lo = getRanksLo()) {
    const int64_t l = (int64_t)*lo, h = getRanksHi() ? (int64_t)*getRanksHi() : -1;
    if (l < 0 || (h >= 0 && h <= l))
      return emitOpError("ranks [") << l << ", " << (h < 0 ? std::string("R") : std::to_string(h))
                                    << ") is empty";
  }
  return checkClause(*this, getClause());
}
