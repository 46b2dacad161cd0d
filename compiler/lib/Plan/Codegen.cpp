// Atom lowering: a collective's plans to C++ that calls the generic executor
// (spec/include/purlin/spec/Exec.h), plus the entry of one target. The body is
// the same for every target; a target is a row of the target table
// (purlin/spec/Targets.def: its atoms' header and file type) and the atoms
// behind that header.
#include "purlin/Plan/Plan.h"
#include "CodegenEpilogue.h"
#include "purlin/spec/Target.h"

#include "purlin/spec/Exec.h"

#include <cstdio>
#include <sstream>

namespace purlin {

namespace {
std::string cString(const std::string &s) {
  std::string o = "\"";
  for (char ch : s) {
    if (ch == '\n')
      o += "\\n\"\n    \"";
    else if (ch == '"' || ch == '\\')
      o += std::string("\\") + ch;
    else
      o += ch;
  }
  return o + "\"";
}

// Where a plan's epilogue may run as a launch of its own (the unfused
// plans, on a target that can: Tgt::epilogueApart()): the plan's one
// consume `from received`, not chunked, with only boundary syncs after it
// (skipped when every rank runs in one launch, the only case a target
// splits). `split` is the first of the syncs right before it, which only
// order it after the steps before (the launch boundary does that then).
// {-1, -1}: none.
struct ApplySplit {
  int split = -1, apply = -1;
};
ApplySplit applySplit(const Plan &p) {
  ApplySplit a;
  for (size_t s = 0; s < p.steps.size(); ++s) {
    const Step &st = p.steps[s];
    if (st.kind == StepKind::Consume &&
        (st.src == SourceKind::Received || st.src == SourceKind::Owners)) {
      if (a.apply >= 0 || st.chunked)
        return {};
      a.apply = (int)s;
    } else if (a.apply >= 0 &&
               !((st.kind == StepKind::Notify || st.kind == StepKind::Wait) && st.boundary)) {
      return {};
    }
  }
  if (a.apply < 0)
    return {};
  a.split = a.apply;
  while (a.split > 0 && !p.steps[a.split - 1].chunked &&
         (p.steps[a.split - 1].kind == StepKind::Notify ||
          p.steps[a.split - 1].kind == StepKind::Wait))
    --a.split;
  return a;
}

// The consume of a plan whose lanes share only its epilogue's rows: one
// chunk, and besides that consume (through the epilogue, from the inputs,
// fused: one-shot `mine` or two-shot `owned`) only exposes and boundary
// syncs of one lane each. Such a plan reads no scratch and waits for no
// other lane, so a launch may run fewer lanes than it has (each takes a
// larger piece of the rows: purlin_plan_info::rows, Shared::liveLanes).
// Null: any other plan.
const Step *rowLaneStep(const Plan &p) {
  if (p.chunks != 1)
    return nullptr;
  const Step *consume = nullptr;
  for (const Step &st : p.steps) {
    if (st.kind == StepKind::Stage && st.stage == StageMode::Expose)
      continue;
    if ((st.kind == StepKind::Notify || st.kind == StepKind::Wait) && st.boundary &&
        !st.allLanes && !st.flagged())
      continue;
    if (st.kind != StepKind::Consume || consume || !st.epilogue || st.flagged() ||
        st.src != SourceKind::Input || st.dst == DestKind::Received || st.ranksLo != 0 ||
        st.ranksHi != -1)
      return nullptr;
    consume = &st;
  }
  return consume;
}

struct Emitter {
  const Collective &c;
  std::ostringstream os;

  // Slot of each scalar parameter in Params::s, of each table in tab*.
  int scalarSlot(const std::string &n) const {
    int k = 0;
    for (auto &p : c.params) {
      if (isScalarParam(p.kind)) {
        if (p.name == n)
          return k;
        ++k;
      }
    }
    return -1;
  }

  /// C++ for `e` inside a clause struct: coordinates read c[d], a set's
  /// variable `var` reads v, parameters P.
  std::string expr(const Expr &e, const Clause *cl, const std::string &var = "") const {
    return e.cxx([&](const std::string &n) -> std::string {
      if (!var.empty() && n == var)
        return "v";
      if (cl)
        for (size_t d = 0; d < cl->dims.size(); ++d)
          if (cl->dims[d].name == n)
            return "c[" + std::to_string(d) + "]";
      int s = scalarSlot(n);
      if (s >= 0)
        return "P.s[" + std::to_string(s) + "]";
      return "tab_" + n;
    });
  }

  void tables() {
    int t = 0;
    for (auto &p : c.params) {
      if (p.kind != ParamKind::Table)
        continue;
      os << "PURLIN_HD int64_t tab_" << p.name << "(const Params &P";
      std::string args;
      for (size_t i = 0; i < p.dims.size(); ++i) {
        os << ", int64_t i" << i;
        args += ", i" + std::to_string(i);
      }
      os << ") { return P.lookup(" << t++ << args << "); }\n";
    }
  }

  void clause(size_t k) {
    const Clause &cl = c.clauses[k];
    RankRole f = rankRole(c, cl, cl.from.rank), t = rankRole(c, cl, cl.to.rank);
    auto role = [](const RankRole &r) {
      return r.kind == RankRole::Every   ? "kEvery"
             : r.kind == RankRole::Coord ? "kCoord"
             : r.kind == RankRole::Fixed ? "kFixed"
             : r.kind == RankRole::Map   ? "kMap"
                                         : "kSet";
    };
    std::string op = !cl.opParam.empty() ? "kOpParam"
                     : cl.op == RedOp::Copy
                         ? "kCopy"
                         : std::string("k") + (char)std::toupper(redOpName(cl.op)[0]) +
                               (redOpName(cl.op) + 1);
    std::string dims;
    for (auto &d : cl.dims)
      dims += (dims.empty() ? "" : ", ") + d.name;
    os << "// name (" << dims << "): " << cl.from.buffer << "@"
       << rankSelText(cl.from.rank) << "["
       << cl.from.index.str() << "] -> " << cl.to.buffer << "@"
       << rankSelText(cl.to.rank) << "["
       << cl.to.index.str() << "] "
       << (cl.opParam.empty() ? redOpName(cl.op) : cl.opParam) << "\n";
    os << "struct Clause" << k << " {\n";
    os << "  static constexpr int kIndex = " << k << ", kDims = " << cl.dims.size() << ";\n";
    os << "  static constexpr int kFromRole = " << role(f) << ", kFromDim = " << f.dim << ";\n";
    os << "  static constexpr int kToRole = " << role(t) << ", kToDim = " << t.dim << ";\n";
    os << "  static constexpr int kFromBuf = " << c.bufferIndex(cl.from.buffer)
       << ", kToBuf = " << c.bufferIndex(cl.to.buffer) << ", kOp = " << op << ";\n";
    os << "  PURLIN_HD static int64_t fromFixed(const Params &P) { (void)P; return "
       << (f.kind == RankRole::Fixed ? expr(cl.from.rank.rank, nullptr) : "0") << "; }\n";
    os << "  PURLIN_HD static int64_t toFixed(const Params &P) { (void)P; return "
       << (t.kind == RankRole::Fixed ? expr(cl.to.rank.rank, nullptr) : "0") << "; }\n";
    os << "  PURLIN_HD static int64_t extent(int d, const int64_t *c, const Params &P) {\n"
       << "    (void)c; (void)P;\n    switch (d) {\n";
    for (size_t d = 0; d < cl.dims.size(); ++d)
      os << "    case " << d << ": return " << expr(cl.dims[d].extent, &cl) << ";\n";
    os << "    }\n    return 0;\n  }\n";
    os << "  PURLIN_HD static int64_t fromIndex(const int64_t *c, const Params &P) {\n"
       << "    (void)c; (void)P;\n    return " << expr(cl.from.index, &cl) << ";\n  }\n";
    os << "  PURLIN_HD static int64_t toIndex(const int64_t *c, const Params &P) {\n"
       << "    (void)c; (void)P;\n    return " << expr(cl.to.index, &cl) << ";\n  }\n";
    if (isGeneralClause(c, cl)) {
      // Maps and sets: the executor enumerates the names by groups
      // (exec/Groups.h).
      char mask[16];
      std::snprintf(mask, sizeof mask, "0x%xu", rankDims(cl));
      os << "  static constexpr bool kGeneral = true;\n"
         << "  static constexpr unsigned kRankDims = " << mask << ";\n";
      for (const auto &[side, sel] : {std::make_pair("from", &cl.from.rank),
                                      std::make_pair("to", &cl.to.rank)}) {
        os << "  PURLIN_HD static int64_t " << side
           << "Rank(const int64_t *c, int64_t v, const Params &P) {\n"
           << "    (void)c; (void)v; (void)P;\n    return "
           << (sel->every ? "v" : expr(sel->rank, &cl, sel->var)) << ";\n  }\n";
        os << "  PURLIN_HD static int64_t " << side
           << "Count(const int64_t *c, const Params &P) {\n"
           << "    (void)c; (void)P;\n    return "
           << (sel->isSet() ? expr(sel->extent, &cl) : "1") << ";\n  }\n";
      }
    }
    os << "};\n\n";
    if (!cl.epilogue.empty())
      emitEpilogue(os, c, k, [&](const Expr &e) { return expr(e, &c.clauses[k]); });
  }

  // The executor's constant for a vocabulary word: prefix + the word's name
  // (Plan.h) capitalised: kPeersDsts, kSelMine, kSrcInput, kDstAll. Exec.h
  // defines each from Vocabulary.h, so a misspelling fails to compile.
  static std::string word(const char *prefix, const char *name) {
    std::string s = prefix;
    s += (char)std::toupper(name[0]);
    return s + (name + 1);
  }
  static std::string flagsText(int f) {
    std::string s;
    auto add = [&](int bit, const char *name) {
      if (f & bit)
        s += std::string(s.empty() ? ", " : " | ") + name;
    };
    add(exec::kAllLanes, "kAllLanes");
    add(exec::kBoundary, "kBoundary");
    add(exec::kFlagged, "kFlagged");
    add(exec::kFlagged128, "kFlagged128");
    add(exec::kParity, "kParity");
    return s;
  }

  void step(const Plan &p, const Step &st, const char *chunk, const char *ind) {
    std::string C = "Clause" + std::to_string(st.clause);
    const Clause &cl = c.clauses[st.clause];
    const ExecArgs a = execArgs(st);
    switch (st.kind) {
    case StepKind::Stage:
      os << ind << "// snac.stage " << stageModeName(st.stage) << " @" << cl.from.buffer << "\n";
      if (st.stage == StageMode::Copy)
        os << ind << "{ const Params &P = t.shared().P; (void)P;\n" << ind
           << "  stageCopy<" << C << ">(t, " << expr(c.buffer(cl.from.buffer)->size, nullptr)
           << ", " << chunk << "); }\n";
      else if (st.stage == StageMode::Push)
        os << ind << "stagePush<" << C << ">(t, " << chunk << flagsText(a.flags) << ");\n";
      break;
    case StepKind::Notify:
    case StepKind::Wait:
      os << ind << (st.kind == StepKind::Notify ? "notify" : "wait") << "<" << C << ">(t, "
         << st.signal << " /*" << p.signals[st.signal] << "*/, " << word("kPeers", peerSetName(st.peers)) << ", "
         << chunk << flagsText(a.flags) << ");\n";
      break;
    case StepKind::Consume: {
      // The snac verifier: an epilogue runs mine to self or owned to all;
      // the unfused plans keep rows (to received) and apply it later (mine
      // from received to self, owned from received to all, or mine from
      // owners to self: each row from its owner's area).
      if (st.src == SourceKind::Received || st.src == SourceKind::Owners) {
        os << ind
           << (st.src == SourceKind::Owners    ? "applyRowsGathered<"
               : st.sel == Selection::Owned ? "applyRowsOwned<"
                                            : "applyRows<")
           << C << ", Epilogue" << st.clause << ">(t, " << chunk << ");\n";
        break;
      }
      if (st.epilogue || st.dst == DestKind::Received) {
        const bool owned = st.sel == Selection::Owned;
        os << ind
           << (st.dst == DestKind::Received ? (owned ? "stashRowsOwned<" : "stashRows<")
                                            : (owned ? "consumeRowsOwned<" : "consumeRows<"))
           << C << ", Epilogue" << st.clause << ">(t, "
           << word("kSrc", sourceKindName(st.src)) << ", " << chunk << ");\n";
        break;
      }
      os << ind << "consume<" << C << ">(t, "
         << word("kSel", selectionName(st.sel)) << ", " << word("kSrc", sourceKindName(st.src))
         << ", " << word("kDst", destKindName(st.dst)) << ", " << chunk;
      // A contributor range only where the step has one (else exec.h's
      // defaults: every rank).
      if (a.lo != 0 || a.hi != exec::kMaxRanks)
        os << ", " << (a.flags ? flagsText(a.flags).substr(2) : "0") << ", " << a.lo << ", "
           << (a.hi == exec::kMaxRanks ? "kMaxRanks" : std::to_string(a.hi));
      else
        os << flagsText(a.flags);
      os << ");\n";
      break;
    }
    }
  }

  // The call of exec's laneRowShape for consume step `st` (its clause's
  // rows, an owner's share where it is owned) into `out` ("rows, inner");
  // `apply`: for the epilogue's launch of its own (applyShape_N).
  static std::string laneRowShape(const Step &st, const char *out, bool apply = false) {
    const std::string k = std::to_string(st.clause);
    return "detail::laneRowShape<Clause" + k + ", Epilogue" + k + (apply ? ", true" : "") +
           ">(*S, " +
           (st.sel == Selection::Owned ? "true" : "false") + ", " + out + ");";
  }

  void plan(size_t i, const Plan &p) {
    os << "// snac.program \"" << p.strategy << "\" lanes " << p.lanes << " chunks " << p.chunks
       << "\ntemplate <class Tgt> PURLIN_HD void plan_" << i << "(Tgt &t) {\n";
    const ApplySplit ap = applySplit(p);
    for (const StepRun &run : stepRuns(p)) {
      if (!run.chunked) {
        for (size_t s = run.begin; s < run.end; ++s) {
          if ((int)s == ap.split)
            os << "  // Where every rank runs in this launch, a target may run the\n"
                  "  // epilogue as a launch of its own (apply_"
               << i << "), after this one.\n"
               << "  if (t.epilogueApart())\n    return;\n";
          step(p, p.steps[s], "0", "  ");
        }
        continue;
      }
      os << "  for (int ch = 0; ch < t.shared().K; ++ch) {\n";
      for (size_t s = run.begin; s < run.end; ++s)
        step(p, p.steps[s], "ch", "    ");
      os << "  }\n";
    }
    os << "}\n\n";
    if (ap.apply >= 0) {
      // The epilogue's launch of its own: the consume from received alone,
      // and the rows x elements a rank applies (for the launch's grid: the
      // clause's rows, or an owner's share of them, ceil(rows / R), in the
      // owned form: epiRows cuts rows piece r of R), and the ranks whose
      // statements each row runs (1, or R owned: the launch's shape).
      const Step &st = p.steps[ap.apply];
      os << "template <class Tgt> PURLIN_HD void apply_" << i << "(Tgt &t) {\n";
      step(p, st, "0", "  ");
      os << "}\ninline void applyShape_" << i
         << "(const Shared *S, int64_t *rows, int64_t *inner, int *ranks) {\n"
         << "  " << laneRowShape(st, "*rows, *inner", true) << "\n  *ranks = "
         << (st.sel == Selection::Owned ? "S->R" : "1") << ";\n}\n\n";
    }
    if (const Step *st = rowLaneStep(p))
      // The rows its lanes share (purlin_plan_info::rows): a runtime runs
      // no lane without one (Shared::liveLanes).
      os << "inline int64_t rows_" << i << "(const Shared *S) {\n"
         << "  int64_t rows = 1, inner = 1;\n  " << laneRowShape(*st, "rows, inner")
         << "\n  return rows;\n}\n\n";
    // Scratch: exec.h's layout of the areas the stages need, in order.
    os << "inline int64_t layout_" << i << "(Shared *S) {\n"
       << "  const Params &P = S->P; (void)P;\n  int64_t off = 0;\n  layoutReset(S);\n";
    for (const ScratchArea &a : scratchAreas(c, p)) {
      if (a.kind == ScratchArea::Copy)
        os << "  off = layoutCopy(S, " << a.index << ", "
           << expr(c.buffers[a.index].size, nullptr) << ", off);\n";
      else if (a.kind == ScratchArea::Received) // f32 rows (exec/Epilogue.h)
        os << "  off = layoutReceived<Clause" << a.index << ">(S, "
           << expr(c.buffer(c.clauses[a.index].to.buffer)->size, nullptr) << ", 4, off);\n";
      else if (a.kind == ScratchArea::Slots)
        os << "  off = layoutSlots<Clause" << a.index << ">(S, "
           << (a.slotFlags() ? flagsText(a.slotFlags()).substr(2) : "0")
           << ", off);\n";
      else
        os << "  off = layoutPartial<Clause" << a.index << ">(S, "
           << expr(c.buffer(c.clauses[a.index].from.buffer)->size, nullptr) << ", off);\n";
    }
    os << "  return layoutEnd(S, off);\n}\n\n";
  }
};
} // namespace

bool emitCode(const Collective &c, const std::vector<Plan> &plans,
              const std::string &target, std::string &source,
              std::string &header, std::string &error) {
  AotSet aot;
  return aotSet(c, "", aot, error) &&
         emitCode(c, plans, target, aot, source, header, error);
}

bool emitCode(const Collective &c, const std::vector<Plan> &plans,
              const std::string &target, const AotSet &aot,
              std::string &source, std::string &header, std::string &error) {
  const TargetInfo *ti = findTarget(target);
  if (!ti) {
    error = "unknown target '" + target + "' (" + targetNames() + ")";
    return false;
  }
  if (c.clauses.size() > (size_t)limits::kMaxClauses ||
      c.buffers.size() > (size_t)limits::kMaxBuffers) {
    error = "the executor supports at most " + std::to_string(limits::kMaxClauses) +
            " clauses and " + std::to_string(limits::kMaxBuffers) + " buffers";
    return false;
  }
  Emitter e{c, {}};
  const std::string ns = "purlin_gen_" + c.name;
  bool reduces = false;
  for (auto &cl : c.clauses)
    reduces |= cl.op != RedOp::Copy || !cl.opParam.empty();
  std::ostringstream &os = e.os;
  // The plans' code (tables, clauses, plans, entries): compiled here, and
  // for a GPU target kept as text too, for the runtime's first-use compiler.
  os << "// The ops the clauses fix (and copy): every kernel is built for them.\n"
     << "constexpr uint32_t kClauseOps = " << hexMask(clauseOps(c)) << ";\n\n";
  e.tables();
  for (size_t k = 0; k < c.clauses.size(); ++k)
    e.clause(k);
  for (size_t i = 0; i < plans.size(); ++i)
    e.plan(i, plans[i]);
  // For a GPU target: whether some clause has an epilogue, and its widest
  // row in elements for the call's parameters (the SM target launches
  // kernels with a wider register row where a row would not fit the usual
  // one: atom-kernels/common/sm/target.cuh, PURLIN_SM_EPI_ROW_WIDE).
  if (ti->gpu()) {
    bool epi = false;
    for (auto &cl : c.clauses)
      epi |= !cl.epilogue.empty();
    os << "// The epilogues' widest row, in elements, at S->P (0: none).\n"
       << "constexpr bool kHasEpilogue = " << (epi ? "true" : "false") << ";\n"
       << "inline int64_t epiRowElems(const Shared *S) {\n  int64_t most = 0;\n";
    for (size_t k = 0; k < c.clauses.size(); ++k)
      if (!c.clauses[k].epilogue.empty())
        os << "  {\n    int64_t ext[kMaxDims] = {0}, rows = 1, inner = 1;\n"
           << "    detail::rowShape<Clause" << k << ", Epilogue" << k
           << ">(S->P, ext, rows, inner);\n    most = inner > most ? inner : most;\n  }\n";
    os << "  (void)S;\n  return most;\n}\n\n";
  }
  // The last arguments: whether the plan has syncs that are not boundary
  // syncs (when it has none and every rank runs in one launch, a target
  // need not keep epochs; 2: it has some, but none before its epilogue's
  // launch of its own, so that the launch before it need not either), and
  // the line formats of its flagged-line moves (exec::LineFmtBits: a target
  // need not build the others' datapath).
  for (size_t i = 0; i < plans.size(); ++i) {
    const ApplySplit ap = applySplit(plans[i]);
    bool inner = false, innerApart = false;
    int lines = 0;
    for (size_t s = 0; s < plans[i].steps.size(); ++s) {
      const Step &st = plans[i].steps[s];
      const bool own =
          ((st.kind == StepKind::Notify || st.kind == StepKind::Wait) && !st.boundary) ||
          st.flagged(); // flagged lines carry the epoch
      inner |= own;
      innerApart |= own && (int)s < ap.split;
      lines |= exec::lineFmtBit((int)st.lines);
    }
    os << "PURLIN_PLAN_ENTRY(p" << i << ", plan_" << i << ", " << (reduces ? 1 : 0) << ", "
       << (!inner ? 0 : ap.apply >= 0 && !innerApart ? 2 : 1) << ", " << lines;
    if (ap.apply >= 0)
      os << ", apply_" << i << ", applyShape_" << i;
    os << ")\n";
  }
  const std::string body = os.str();
  os.str("");
  os << "// " << c.name << ".purlin." << ti->ext << " -- generated by purlinc --target="
     << target << "; do not edit.\n"
     << "#include \"purlin/spec/Exec.h\"\n#include \"purlin/spec/Entry.h\"\n#include \"" << ti->header
     << "\"\n#include \"" << c.name << ".purlin.h\"\n\n"
     << "namespace " << ns << " {\nusing namespace purlin::exec;\n\n";
  if (ti->gpu())
    os << "// Kernels built ahead of time (purlinc --aot): " << aotText(c, aot)
       << ".\n// The runtime compiles the other pairs at first use from kSource.\n"
       << "constexpr uint32_t kAotDtypes = " << hexMask(aot.dtypes)
       << ", kAotOps = " << hexMask(aot.ops) << ";\n\n";
  os << body;
  os << "\nstatic const purlin_plan_info kPlans[] = {\n";
  for (size_t i = 0; i < plans.size(); ++i) {
    const Plan &p = plans[i];
    bool scratch = false, flagged = false, copies = false;
    for (auto &st : p.steps) {
      scratch |= st.kind == StepKind::Stage && st.stage != StageMode::Expose;
      copies |= st.kind == StepKind::Stage && st.stage == StageMode::Copy;
      flagged |= st.flagged();
    }
    os << "    {\"" << p.strategy << "\", " << p.lanes << ", " << p.chunks << ", "
       << p.signals.size() << ", " << (p.inplaceSafe ? 1 : 0) << ", " << (scratch ? 1 : 0)
       << ", " << p.minBytes << ", " << p.maxBytes << ", layout_" << i
       << ", PURLIN_HOST_ENTRY(p" << i << "), PURLIN_CUDA_ENTRY(p" << i << "), "
       << (flagged ? 1 : 0) << ", " << (p.inplaceSame ? 1 : 0) << ", " << (copies ? 1 : 0)
       << ", " << p.inplaceMaxRanks << ", " << (p.severalLaunches ? 1 : 0) << ", "
       << (applySplit(p).apply >= 0 ? "PURLIN_HOST_APPLY(p" + std::to_string(i) + ")"
                                    : std::string("nullptr"))
       << ", " << (rowLaneStep(p) ? "rows_" + std::to_string(i) : std::string("nullptr"))
       << ", " << p.minRows << ", " << p.maxRows << ", " << p.minRowElems << ", "
       << p.maxRowElems << ", " << p.maxRowsInPlace << "},\n";
  }
  os << "};\n\nstatic const char kDesc[] =\n    " << cString(writeDesc(c)) << ";\n";
  if (ti->gpu())
    os << "\n// The plans' code above, for the runtime's first-use compiler.\n"
       << "static const char kSource[] = R\"purlin_src(\n" << body << ")purlin_src\";\n";
  os << "} // namespace " << ns << "\n\n"
     << "extern \"C\" const purlin_collective_info *purlin_collective_" << c.name
     << "(void) {\n  static const purlin_collective_info info = {\"" << c.name << "\", " << ns
     << "::kDesc, PURLIN_TARGET_NAME, " << plans.size() << ", " << ns << "::kPlans, ";
  if (ti->gpu())
    os << ns << "::kAotDtypes, " << ns << "::kAotOps, " << ns << "::kSource};\n";
  else // the host builds every pair
    os << "0xffffffffu, 0xffffffffu, nullptr};\n";
  os << "  return &info;\n}\n";
  source = os.str();

  std::ostringstream h;
  h << "// " << c.name << ".purlin.h -- generated by purlinc; do not edit.\n"
    << "// Include it and pass purlin_collective_" << c.name
    << "() to purlinCollCreate (purlin/purlin.h).\n"
    << "#pragma once\n#include \"purlin/spec/Entry.h\"\n\n";
  // The rank count comes from the communicator, not from purlinArgs: list
  // it apart from the scalars the caller passes (purlin.h,
  // purlinCollScalarName).
  std::string ranks, scalars;
  for (auto &p : c.params) {
    if (p.kind == ParamKind::Ranks)
      ranks = p.name;
    else if (isScalarParam(p.kind))
      scalars += " " + p.name + " (" + paramKindName(p.kind) + ")";
  }
  h << "// Parameters: " << ranks << " (ranks) is the communicator's size; "
    << "purlinArgs.scalars, in order:" << (scalars.empty() ? " none" : scalars);
  h << "\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
    << "const purlin_collective_info *purlin_collective_" << c.name << "(void);\n"
    << "#ifdef __cplusplus\n}\n#endif\n";
  header = h.str();
  return true;
}

} // namespace purlin
