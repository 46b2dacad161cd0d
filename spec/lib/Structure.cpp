// The structural rules of a collective (checkStructure): what needs no
// parameter values.
#include "purlin/spec/Collective.h"
#include "purlin/spec/Epilogue.h"

#include <algorithm>
#include <random>
#include <set>
#include <sstream>

namespace purlin {

//===----------------------------------------------------------------------===//
// Structural checks
//===----------------------------------------------------------------------===//
namespace {
struct StructureChecker {
  const Collective &c;
  std::vector<Diag> &diags;
  bool ok = true;

  void error(SrcLoc loc, const std::string &msg) {
    diags.push_back({loc, msg});
    ok = false;
  }

  // Checks that `e` names only scalar parameters, tables (with the right
  // number of subscripts) and the coordinates in `coords`.
  void checkNames(const Expr &e, const std::vector<std::string> &coords,
                  SrcLoc loc, const std::string &what) {
    if (e.isNull())
      return;
    if (e.kind() == Expr::Kind::Var) {
      if (std::find(coords.begin(), coords.end(), e.name()) != coords.end())
        return;
      const Param *p = c.param(e.name());
      if (!p)
        error(loc, "unknown name '" + e.name() + "' in " + what);
      else if (p->kind == ParamKind::Type || p->kind == ParamKind::Op)
        error(loc, "'" + e.name() + "' is " +
                       (p->kind == ParamKind::Type ? "an element type"
                                                   : "a reduction op") +
                       ", not a value, in " + what);
      else if (p->kind == ParamKind::Table)
        error(loc, "table '" + e.name() + "' needs " +
                       std::to_string(p->dims.size()) + " subscript(s) in " +
                       what);
      return;
    }
    if (e.kind() == Expr::Kind::Table) {
      const Param *p = c.param(e.name());
      if (!p || p->kind != ParamKind::Table)
        error(loc, "'" + e.name() + "' is not a table, in " + what);
      else if (p->dims.size() != e.operands().size())
        error(loc, "table '" + e.name() + "' needs " +
                       std::to_string(p->dims.size()) + " subscript(s), got " +
                       std::to_string(e.operands().size()) + ", in " + what);
    }
    for (auto &o : e.operands())
      checkNames(o, coords, loc, what);
  }

  void run() {
    std::set<std::string> seen;
    int ranks = 0;
    for (auto &p : c.params) {
      if (!seen.insert(p.name).second)
        error(p.loc, "'" + p.name + "' is defined more than once");
      if (p.kind == ParamKind::Ranks)
        ++ranks;
      if (p.kind == ParamKind::Table) {
        if (p.dims.empty())
          error(p.loc, "table '" + p.name + "' needs at least one extent");
        for (auto &d : p.dims)
          checkNames(d, {}, p.loc, "the extent of table '" + p.name + "'");
        if (p.max.isNull())
          error(p.loc, "table '" + p.name + "' needs a bound ('<= expr')");
        else
          checkNames(p.max, {}, p.loc, "the bound of table '" + p.name + "'");
      }
    }
    if (ranks == 0)
      error(c.loc, "collective '" + c.name +
                       "' has no rank-count parameter (add 'R: ranks')");
    else if (ranks > 1)
      error(c.loc, "collective '" + c.name +
                       "' has more than one rank-count parameter");
    for (auto &b : c.buffers) {
      if (!seen.insert(b.name).second)
        error(b.loc, "'" + b.name + "' is defined more than once");
      DType t;
      const Param *tp = c.param(b.dtype);
      if (!(tp && tp->kind == ParamKind::Type) && !declaredDType(c, b, t))
        error(b.loc, "unknown element type '" + b.dtype + "' of buffer '" +
                         b.name + "'");
      checkNames(b.size, {}, b.loc, "the size of buffer '" + b.name + "'");
    }
    if (c.clauses.empty())
      error(c.loc, "collective '" + c.name + "' names nothing (no 'name' clause)");
    for (size_t k = 0; k < c.clauses.size(); ++k) {
      clause(c.clauses[k], k, seen);
      ok &= checkEpilogue(c, c.clauses[k], diags);
    }
    // What docs/language.md promises: every input is read, every output
    // written (a buffer no clause uses is a mistake, or dead weight that
    // the caller still has to allocate).
    for (auto &b : c.buffers) {
      bool used = false;
      for (auto &cl : c.clauses)
        used |= (b.role == BufferRole::In ? cl.from.buffer : cl.to.buffer) == b.name ||
                (b.role == BufferRole::In ? epilogueReads(cl, b.name)
                                          : epilogueStores(cl, b.name));
      if (!used)
        error(b.loc, b.role == BufferRole::In
                         ? "input '" + b.name + "' is never read: no name clause reads it"
                         : "output '" + b.name +
                               "' is never written: no name clause writes it");
    }
  }

  // A rank selector: names it may use (the coordinates, parameters and, in
  // a set, the set's variable), quasi-affine in the coordinates.
  void rank(const Access &a, bool isFrom, const std::vector<std::string> &coords) {
    if (a.rank.every)
      return;
    const std::string side = isFrom ? "contributor" : "destination";
    std::vector<std::string> names = coords;
    if (a.rank.isSet()) {
      const std::string &v = a.rank.var;
      if (std::find(coords.begin(), coords.end(), v) != coords.end() || c.param(v) ||
          c.buffer(v))
        error(a.rankLoc, "the set variable '" + v + "' hides the " +
                             (c.param(v) ? "parameter" : c.buffer(v) ? "buffer" : "coordinate") +
                             " of that name; pick another name");
      checkNames(a.rank.extent, {}, a.rankLoc,
                 "the extent of the set variable '" + v + "' (parameters only)");
      names.push_back(v);
    }
    checkNames(a.rank.rank, names, a.rankLoc, "the " + side + " rank");
    if (!a.rank.rank.isQuasiAffineIn(names)) {
      std::string list;
      for (auto &n : names)
        list += (list.empty() ? "" : ", ") + n;
      error(a.rankLoc, "the " + side + " rank must be quasi-affine in (" + list +
                           "): sums, products with a factor free of them, '/' and '%' "
                           "by divisors free of them; '" +
                           a.rank.rank.str() + "' is not");
    }
  }

  void access(const Clause &cl, size_t k, const Access &a, bool isFrom,
              const std::vector<std::string> &coords) {
    const Buffer *b = c.buffer(a.buffer);
    if (!b) {
      error(a.loc, "unknown buffer '" + a.buffer + "'");
      return;
    }
    // An output may be read by a later step: a clause after one that
    // writes it (clauses apply in order).
    bool writtenBefore = false;
    for (size_t j = 0; j < k; ++j)
      writtenBefore |= c.clauses[j].to.buffer == a.buffer;
    if (isFrom && b->role != BufferRole::In && !writtenBefore)
      error(a.loc, "'" + a.buffer +
                       "' is an output buffer; names are read from inputs (or from "
                       "outputs that earlier clauses write)");
    if (!isFrom && b->role != BufferRole::Out)
      error(a.loc, "'" + a.buffer +
                       "' is an input buffer; names are written to outputs");
    (void)cl;
    rank(a, isFrom, coords);
    checkNames(a.index, coords, a.indexLoc,
               "the index of '" + a.buffer + "'");
    // Rank coordinates select the rank; the index is affine in the others
    // (rank coordinates may appear too, like r in y[r*C + i]).
    if (!a.index.isLinearIn(coords)) {
      std::string list;
      for (auto &co : coords)
        list += (list.empty() ? "" : ", ") + co;
      error(a.indexLoc, "the index of '" + a.buffer +
                            "' must be affine in the coordinates (" + list +
                            "): '" + a.index.str() + "'");
    }
  }

  void clause(const Clause &cl, size_t k, const std::set<std::string> &globals) {
    std::vector<std::string> coords;
    for (auto &d : cl.dims) {
      if (globals.count(d.name) ||
          std::find(coords.begin(), coords.end(), d.name) != coords.end())
        error(d.loc, "coordinate '" + d.name + "' is defined more than once");
      checkNames(d.extent, coords, d.loc,
                 "the extent of coordinate '" + d.name + "'");
      coords.push_back(d.name);
    }
    if (cl.dims.empty())
      error(cl.loc, "a name space needs at least one coordinate");
    access(cl, k, cl.from, true, coords);
    access(cl, k, cl.to, false, coords);
    // Fixing the rank coordinates (those a rank selector mentions) leaves a
    // box: the extent of every other coordinate may use rank coordinates
    // and parameters, nothing else; the rank coordinates range over
    // extents of parameters (the executor enumerates them).
    const unsigned rankMask = rankDims(cl);
    auto isRankDim = [&](size_t d) { return (rankMask >> d) & 1; };
    for (size_t d = 0; d < cl.dims.size(); ++d)
      for (size_t e = 0; e < d; ++e)
        if (cl.dims[d].extent.mentions(cl.dims[e].name)) {
          if (isRankDim(d))
            error(cl.dims[d].loc, "the extent of rank coordinate '" + cl.dims[d].name +
                                      "' may use parameters only, not '" +
                                      cl.dims[e].name + "'");
          else if (!isRankDim(e))
            error(cl.dims[d].loc, "the extent of '" + cl.dims[d].name +
                                      "' may use rank coordinates and "
                                      "parameters only, not '" +
                                      cl.dims[e].name + "'");
        }
    if (!cl.opParam.empty()) {
      const Param *op = c.param(cl.opParam);
      if (!op || op->kind != ParamKind::Op)
        error(cl.opLoc.line ? cl.opLoc : cl.loc,
              "'" + cl.opParam + "' is not a reduction op parameter");
    }
    if (cl.opParam.empty() && cl.op == RedOp::Copy && cl.from.rank.every)
      error(cl.opLoc.line ? cl.opLoc : cl.loc,
            "a copy name has exactly one contributor, but '" + cl.from.buffer +
                "@*' gives every rank; use reduce(op) or name one rank");
    if (cl.opParam.empty() && cl.op == RedOp::Copy && cl.from.rank.isSet())
      error(cl.opLoc.line ? cl.opLoc : cl.loc,
            "a copy name has exactly one contributor, but '" + cl.from.buffer + "@" +
                rankSelText(cl.from.rank) +
                "' gives a set of ranks; use reduce(op) or name one rank");
    const Buffer *f = c.buffer(cl.from.buffer), *t = c.buffer(cl.to.buffer);
    if (f && t && f->dtype != t->dtype)
      error(cl.loc, "element types differ: '" + f->name + "' is " + f->dtype +
                        ", '" + t->name + "' is " + t->dtype);
  }
};
} // namespace

bool checkStructure(const Collective &c, std::vector<Diag> &diags) {
  StructureChecker sc{c, diags};
  sc.run();
  return sc.ok;
}

} // namespace purlin
