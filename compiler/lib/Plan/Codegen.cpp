// Atom lowering: a collective's plans to C++ that calls the generic executor
// (spec/include/purlin/spec/Exec.h), plus the entry of one target. The body is
// the same for every target; a target is a row of the target table
// (purlin/spec/Targets.def: its atoms' header and file type) and the atoms
// behind that header.
#include "purlin/Plan/Plan.h"
#include "purlin/spec/Target.h"

#include "purlin/spec/Exec.h"

#include <algorithm>
#include <cstdio>
#include <map>
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
      epilogue(k);
  }

  /// C++ (f32) for an epilogue's value: a buffer read is x.load, a row
  /// reduction red[k] (numbered as met: `folds` collects each one's op and
  /// argument), `/` a true division.
  ///
  /// Row-uniform subexpressions (rowUniform) that are more than a constant
  /// or a name are computed once per row and pass instead of per element:
  /// in the element's code (`hoisted` false) such a subexpression prints as
  /// u[k], its text going to `uni` (the epilogue's `uniform` function,
  /// where `hoisted` is true: a let is then the u[k] its value became, or
  /// its value where that is a constant or a name). The same f32 operations
  /// in the same order give the same value, so results stay bit for bit.
  std::string value(const Expr &e, const Clause &cl,
                    std::vector<std::pair<int, std::string>> &folds,
                    std::vector<std::string> &uni,
                    std::map<std::string, size_t> &letU, bool hoisted = false) const {
    if (!hoisted && e.kind() != Expr::Kind::Const && e.kind() != Expr::Kind::Var &&
        rowUniform(e, cl)) {
      std::string text = value(e, cl, folds, uni, letU, true);
      size_t k = 0;
      while (k < uni.size() && uni[k] != text)
        ++k;
      if (k == uni.size())
        uni.push_back(text);
      return "u[" + std::to_string(k) + "]";
    }
    switch (e.kind()) {
    case Expr::Kind::Const:
      return "float(" + std::to_string(e.constValue()) + ")";
    case Expr::Kind::Var: {
      if (e.name() == kEpiRecv)
        return "recv";
      for (auto &st : cl.epilogue.stmts)
        if (st.let == e.name()) {
          if (!hoisted)
            return "v_" + e.name();
          auto it = letU.find(e.name());
          return it != letU.end() ? "u[" + std::to_string(it->second) + "]"
                                  : value(st.value, cl, folds, uni, letU, true);
        }
      return "float(" + expr(e, &cl) + ")";
    }
    case Expr::Kind::Table:
      return "x.load(" + std::to_string(c.bufferIndex(e.name())) + ", " +
             expr(e.operands()[0], &cl) + ")";
    case Expr::Kind::Call: {
      const bool reduces = e.name() == "rowsum" || e.name() == "rowmax";
      std::vector<std::string> args;
      // a reduction's argument is element code (its fold), hoisted or not
      for (auto &o : e.operands())
        args.push_back(value(o, cl, folds, uni, letU, reduces ? false : hoisted));
      if (reduces) {
        folds.push_back({e.name() == "rowsum" ? exec::kEpiRowSum : exec::kEpiRowMax,
                         args[0]});
        return "red[" + std::to_string(folds.size() - 1) + "]";
      }
      std::string s = "purlin_epi_" + e.name() + "(";
      for (size_t i = 0; i < args.size(); ++i)
        s += (i ? ", " : "") + args[i];
      return s + ")";
    }
    case Expr::Kind::Neg:
      return "(-" + value(e.operands()[0], cl, folds, uni, letU, hoisted) + ")";
    default: {
      const char *op = e.kind() == Expr::Kind::Add   ? " + "
                       : e.kind() == Expr::Kind::Sub ? " - "
                       : e.kind() == Expr::Kind::Mul ? " * "
                                                     : " / ";
      std::string a = value(e.operands()[0], cl, folds, uni, letU, hoisted);
      return "(" + a + op + value(e.operands()[1], cl, folds, uni, letU, hoisted) + ")";
    }
    }
  }

  /// Whether an epilogue value is the same for every element of a row: it
  /// reads no inner coordinate, no `recv` and no let that does (row
  /// coordinates, parameters, constants, row reductions and inputs at such
  /// indexes are uniform).
  bool rowUniform(const Expr &e, const Clause &cl) const {
    if (e.kind() == Expr::Kind::Var) {
      const std::string &n = e.name();
      if (n == kEpiRecv)
        return false;
      for (auto &st : cl.epilogue.stmts)
        if (st.let == n)
          return rowUniform(st.value, cl);
      for (auto &d : cl.dims)
        if (d.name == n)
          return std::find(cl.epilogue.rows.begin(), cl.epilogue.rows.end(), n) !=
                 cl.epilogue.rows.end();
      return true; // a parameter
    }
    if (e.kind() == Expr::Kind::Call && (e.name() == "rowsum" || e.name() == "rowmax"))
      return true;
    for (auto &o : e.operands())
      if (!rowUniform(o, cl))
        return false;
    return true;
  }

  // An epilogue's struct (exec/Epilogue.h): its statements per element and
  // pass; pass k folds row reduction k and returns, the last pass stores.
  void epilogue(size_t k) {
    const Clause &cl = c.clauses[k];
    std::vector<std::pair<int, std::string>> folds;
    std::vector<std::string> uni;
    std::map<std::string, size_t> letU; // lets whose value is u[k]
    std::ostringstream body;
    for (const EpiStmt &st : cl.epilogue.stmts) {
      size_t before = folds.size();
      std::string v = value(st.value, cl, folds, uni, letU);
      if (!st.let.empty() && v.rfind("u[", 0) == 0) // the whole value hoisted
        letU[st.let] = std::stoul(v.substr(2));
      for (size_t f = before; f < folds.size(); ++f)
        body << "    if (pass == " << f << ") {\n      acc = purlin_epi_fold("
             << folds[f].first << ", acc, " << folds[f].second
             << ");\n      return;\n    }\n";
      if (!st.let.empty())
        body << "    const float v_" << st.let << " = " << v << "; (void)v_"
             << st.let << ";\n";
      else
        body << "    if (pass == kReductions)\n      x.store("
             << c.bufferIndex(st.buffer) << ", " << expr(st.index, &cl) << ", "
             << v << ");\n";
    }
    os << "// the epilogue of clause " << k << ": rows (";
    for (size_t r = 0; r < cl.epilogue.rows.size(); ++r)
      os << (r ? ", " : "") << cl.epilogue.rows[r];
    os << ")\nstruct Epilogue" << k << " {\n"
       << "  static constexpr int kRowDims = " << cl.epilogue.rows.size()
       << ", kReductions = " << folds.size() << ";\n"
       << "  PURLIN_HD static int reduceOp(int k) {\n    (void)k;\n";
    for (size_t f = 0; f < folds.size(); ++f)
      os << "    if (k == " << f << ") return " << folds[f].first << ";\n";
    os << "    return 0;\n  }\n"
       << "  // the row-uniform values (u), once per row and pass: those that\n"
       << "  // read a row reduction are used only in later passes\n"
       << "  static constexpr int kUniforms = " << uni.size() << ";\n"
       << "  template <class X>\n  PURLIN_HD static void uniform(const X &x, "
          "const int64_t *c, const Params &P, const float *red, float *u) {\n"
       << "    (void)x; (void)c; (void)P; (void)red; (void)u;\n";
    for (size_t k = 0; k < uni.size(); ++k)
      os << "    u[" << k << "] = " << uni[k] << ";\n";
    os << "  }\n"
       << "  template <class X>\n  PURLIN_HD static void element(const X &x, int pass, "
          "const int64_t *c, const Params &P, float &acc, const float *red, const float *u) {\n"
       << "    (void)pass; (void)c; (void)P; (void)acc; (void)red; (void)u;\n"
       << "    const float recv = x.recv(); (void)recv;\n"
       << body.str() << "  }\n};\n\n";
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
      if (st.epilogue) { // the snac verifier: mine to self, or owned to all
        os << ind << (st.sel == Selection::Owned ? "consumeRowsOwned<" : "consumeRows<") << C
           << ", Epilogue" << st.clause << ">(t, " << word("kSrc", sourceKindName(st.src))
           << ", " << chunk << ");\n";
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

  void plan(size_t i, const Plan &p) {
    os << "// snac.program \"" << p.strategy << "\" lanes " << p.lanes << " chunks " << p.chunks
       << "\ntemplate <class Tgt> PURLIN_HD void plan_" << i << "(Tgt &t) {\n";
    for (const StepRun &run : stepRuns(p)) {
      if (!run.chunked) {
        for (size_t s = run.begin; s < run.end; ++s)
          step(p, p.steps[s], "0", "  ");
        continue;
      }
      os << "  for (int ch = 0; ch < t.shared().K; ++ch) {\n";
      for (size_t s = run.begin; s < run.end; ++s)
        step(p, p.steps[s], "ch", "    ");
      os << "  }\n";
    }
    os << "}\n\n";
    // Scratch: exec.h's layout of the areas the stages need, in order.
    os << "inline int64_t layout_" << i << "(Shared *S) {\n"
       << "  const Params &P = S->P; (void)P;\n  int64_t off = 0;\n  layoutReset(S);\n";
    for (const ScratchArea &a : scratchAreas(c, p)) {
      if (a.kind == ScratchArea::Copy)
        os << "  off = layoutCopy(S, " << a.index << ", "
           << expr(c.buffers[a.index].size, nullptr) << ", off);\n";
      else if (a.kind == ScratchArea::Slots)
        os << "  off = layoutSlots<Clause" << a.index << ">(S, " << (a.flagged ? "true" : "false")
           << ", off);\n";
      else
        os << "  off = layoutPartial<Clause" << a.index << ">(S, "
           << expr(c.buffer(c.clauses[a.index].from.buffer)->size, nullptr) << ", off);\n";
    }
    os << "  return off;\n}\n\n";
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
  // The last argument: whether the plan has syncs that are not boundary
  // syncs (when it has none and every rank runs in one launch, a target
  // need not keep epochs).
  for (size_t i = 0; i < plans.size(); ++i) {
    bool inner = false;
    for (auto &st : plans[i].steps)
      inner |= ((st.kind == StepKind::Notify || st.kind == StepKind::Wait) && !st.boundary) ||
               st.flagged; // flagged lines carry the epoch
    os << "PURLIN_PLAN_ENTRY(p" << i << ", plan_" << i << ", " << (reduces ? 1 : 0) << ", "
       << (inner ? 1 : 0) << ")\n";
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
      flagged |= st.flagged;
    }
    os << "    {\"" << p.strategy << "\", " << p.lanes << ", " << p.chunks << ", "
       << p.signals.size() << ", " << (p.inplaceSafe ? 1 : 0) << ", " << (scratch ? 1 : 0)
       << ", " << p.minBytes << ", " << p.maxBytes << ", layout_" << i
       << ", PURLIN_HOST_ENTRY(p" << i << "), PURLIN_CUDA_ENTRY(p" << i << "), "
       << (flagged ? 1 : 0) << ", " << (p.inplaceSame ? 1 : 0) << ", " << (copies ? 1 : 0)
       << ", " << p.inplaceMaxRanks << "},\n";
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
