// A launch's parameters: its scalars and table entries bound and checked
// (against the declared bounds and the instance's maxima), the buffer sizes
// they give, the executor's Params; and the queries that evaluate sizes
// and extents for the application (purlinCollBufferElems, ...).
#include "Internal.h"

using namespace purlin;
using namespace purlin::rt;

void rt::makeBinding(const purlinColl *c, const int64_t *scalars, Binding &b) {
  const Collective &d = c->desc;
  int k = 0;
  for (size_t s = 0; s < c->scalarParams.size(); ++s) {
    const Param &p = d.params[c->scalarParams[s]];
    b.scalars[p.name] = (int)s == c->ranksSlot ? c->comm->R : scalars[k++];
  }
}

bool rt::tableShape(const purlinColl *c, int t, const Binding &b,
                    std::vector<int64_t> &ext, int64_t &words,
                    std::string &err) {
  const Param &p = c->desc.params[c->tableParams[t]];
  ext.clear();
  words = 1;
  for (const Expr &e : p.dims) {
    int64_t n = 0;
    if (!evalParamExpr(c->desc, b, e, n, err))
      return false;
    if (n < 0) {
      err = "table '" + p.name + "' has the negative extent " + e.str() +
            " = " + std::to_string(n);
      return false;
    }
    ext.push_back(n);
    words *= n;
  }
  return true;
}

std::string rt::tableText(const std::string &name,
                          const std::vector<int64_t> &ext, int64_t lin) {
  std::vector<int64_t> sub(ext.size());
  for (size_t i = ext.size(); i-- > 0;) {
    sub[i] = lin < 0 ? ext[i] : (ext[i] ? lin % ext[i] : 0);
    if (lin >= 0 && ext[i])
      lin /= ext[i];
  }
  std::string s = name;
  for (int64_t x : sub)
    s += "[" + std::to_string(x) + "]";
  return s;
}

namespace {
/// Binds a launch's table entries (every table in declaration order,
/// row-major) into `b`, which holds the scalars, and checks them: their
/// number, and each entry within [0, min(declared bound, instance maximum)];
/// a table bound at compile time must repeat its bound values.
purlinStatus bindTables(const purlinColl *c, const int64_t *tables,
                        int64_t nwords, Binding &b) {
  const Collective &d = c->desc;
  const int nt = (int)c->tableParams.size();
  std::vector<std::vector<int64_t>> ext(nt);
  std::vector<int64_t> words(nt);
  int64_t total = 0;
  std::string err, shapes;
  for (int t = 0; t < nt; ++t) {
    if (!tableShape(c, t, b, ext[t], words[t], err))
      return fail(PURLIN_ERR_INVALID_ARGUMENT, err);
    total += words[t];
    shapes +=
        (t ? ", " : "") + tableText(d.params[c->tableParams[t]].name, ext[t]);
  }
  if (nwords != total)
    return fail(PURLIN_ERR_INVALID_ARGUMENT,
                "collective '" + d.name + "' takes " + std::to_string(total) +
                    " table entries (" + shapes + ", row-major), got " +
                    std::to_string(nwords));
  if (total > exec::kMaxTableWords)
    return fail(PURLIN_ERR_PARAM_RANGE,
                "the tables (" + shapes + ") hold " + std::to_string(total) +
                    " entries; the executor holds at most " +
                    std::to_string(exec::kMaxTableWords));
  if (total > 0 && !tables)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinLaunch: null tables");
  const int64_t *v = tables;
  for (int t = 0; t < nt; ++t) {
    b.tables[d.params[c->tableParams[t]].name].assign(v, v + words[t]);
    v += words[t];
  }
  for (int t = 0; t < nt; ++t) {
    const Param &p = d.params[c->tableParams[t]];
    const std::vector<int64_t> &vals = b.tables[p.name];
    if (!c->boundTables[t].empty()) {
      if (vals != c->boundTables[t])
        return fail(PURLIN_ERR_PARAM_RANGE,
                    "table '" + p.name + "' was bound at compile time to " +
                        p.bound + "; the launch passes other values");
      continue;
    }
    int64_t declared = 0;
    if (!evalParamExpr(d, b, p.max, declared, err))
      return fail(PURLIN_ERR_INVALID_ARGUMENT, err);
    for (size_t k = 0; k < vals.size(); ++k) {
      const int64_t x = vals[k];
      const std::string entry = "table entry " +
                                tableText(p.name, ext[t], (int64_t)k) + " = " +
                                std::to_string(x);
      if (x < 0)
        return fail(PURLIN_ERR_PARAM_RANGE, entry + " is negative");
      if (x > declared)
        return fail(PURLIN_ERR_PARAM_RANGE, entry + " is beyond its bound " +
                                                p.max.str() + " = " +
                                                std::to_string(declared));
      if (x > c->tableMax[t])
        return fail(PURLIN_ERR_PARAM_RANGE,
                    entry + " is beyond the instance's maximum " +
                        std::to_string(c->tableMax[t]) + " (maxParams)");
    }
  }
  return PURLIN_SUCCESS;
}
} // namespace

/// The element type and op of a call, checked against the values bound at
/// compile time (the op a copy collective ignores; a clause's fixed op when
/// there is no op parameter).
purlinStatus rt::typeAndOp(const purlinColl *c, int dtype, int launchOp,
                           int &op) {
  if (dtype < 0 || dtype >= kNumDTypes)
    return fail(PURLIN_ERR_UNSUPPORTED_TYPE,
                "element type " + std::to_string(dtype) + " is unknown");
  std::string msg;
  if (purlinStatus st = c->bound.checkType(dtype, msg))
    return fail(st, msg);
  op = exec::kCopy;
  if (c->hasOpParam) {
    if (launchOp < PURLIN_SUM || launchOp > PURLIN_AVG)
      return fail(PURLIN_ERR_UNSUPPORTED_OP,
                  "op " + std::to_string(launchOp) +
                      " is not a reduction (sum, prod, min, max, avg)");
    if (purlinStatus st = c->bound.checkOp(launchOp, msg))
      return fail(st, msg);
    op = launchOp;
  } else if (c->fixedOp >= 0) {
    op = c->fixedOp;
  }
  return PURLIN_SUCCESS;
}

purlinStatus rt::bindScalars(const purlinColl *c, const purlinArgs *a,
                             exec::Shared &S) {
  const Collective &d = c->desc;
  const int nsc = (int)c->scalarNames.size();
  if (a->nscalars != nsc || (nsc > 0 && !a->scalars))
    return fail(PURLIN_ERR_INVALID_ARGUMENT,
                "collective '" + d.name + "' takes " + std::to_string(nsc) +
                    " scalar parameters, got " + std::to_string(a->nscalars));
  int k = 0;
  for (size_t s = 0; s < c->scalarParams.size(); ++s) {
    if ((int)s == c->ranksSlot) {
      S.P.s[s] = c->comm->R;
      continue;
    }
    const Param &p = d.params[c->scalarParams[s]];
    const int64_t v = a->scalars[k++];
    std::string msg;
    if (purlinStatus st = c->bound.checkScalar(p.name, v, msg))
      return fail(st, msg);
    if (v < 0 || v > c->maxScalars[s])
      return fail(PURLIN_ERR_PARAM_RANGE,
                  "parameter '" + p.name + "' = " + std::to_string(v) +
                      " is outside [0, " + std::to_string(c->maxScalars[s]) +
                      "] (the instance's maximum)");
    if (p.kind == ParamKind::Group && (v < 1 || c->comm->R % v != 0))
      return fail(PURLIN_ERR_PARAM_RANGE,
                  "group size '" + p.name + "' = " + std::to_string(v) +
                      " must divide the rank count " +
                      std::to_string(c->comm->R));
    S.P.s[s] = v;
  }
  return PURLIN_SUCCESS;
}

purlinStatus rt::bindLaunch(purlinColl *c, const purlinArgs *a) {
  const Collective &d = c->desc;
  const int nsc = (int)c->scalarNames.size();
  if (a->ntableWords < 0)
    return fail(PURLIN_ERR_INVALID_ARGUMENT,
                "purlinLaunch: ntableWords is negative");
  if (c->tableParams.empty() && a->ntableWords != 0)
    return fail(PURLIN_ERR_INVALID_ARGUMENT,
                "collective '" + d.name + "' has no table parameters, got " +
                    std::to_string(a->ntableWords) + " table entries");
  std::vector<int64_t> sc(a->scalars, a->scalars + nsc), tw;
  const bool fits = a->ntableWords <= exec::kMaxTableWords && a->tables;
  if (fits)
    tw.assign(a->tables, a->tables + a->ntableWords);
  if (c->lastValid && (fits || a->ntableWords == 0) && sc == c->lastScalars &&
      tw == c->lastTables)
    return PURLIN_SUCCESS;
  c->lastValid = false;
  Binding b;
  makeBinding(c, a->scalars, b);
  std::string err;
  if (!c->tableParams.empty()) {
    if (purlinStatus st = bindTables(c, a->tables, a->ntableWords, b))
      return st;
    if (!fillParams(d, b, c->lastParams, err))
      return fail(PURLIN_ERR_PARAM_RANGE, err);
  }
  std::vector<int64_t> elems;
  for (size_t i = 0; i < d.buffers.size(); ++i) {
    int64_t n;
    if (!bufferElems(d, b, (int)i, n, err))
      return fail(PURLIN_ERR_INVALID_ARGUMENT, err);
    if (n < 0)
      return fail(PURLIN_ERR_PARAM_RANGE,
                  "buffer '" + d.buffers[i].name + "' has the negative size " +
                      d.buffers[i].size.str() + " = " + std::to_string(n));
    elems.push_back(n);
  }
  c->lastScalars = sc;
  c->lastTables = tw;
  c->lastElems = elems;
  c->lastRows = epilogueRows(d, b);
  c->lastValid = true;
  return PURLIN_SUCCESS;
}

extern "C" {

int64_t purlinCollBufferElemsTables(purlinColl_t c, const int64_t *scalars,
                                    const int64_t *tables, int b) {
  if (!c || b < 0 || b >= (int)c->desc.buffers.size() ||
      (!scalars && !c->scalarNames.empty()))
    return -1;
  Binding bd;
  makeBinding(c, scalars, bd);
  std::string err;
  if (tables) { // every table's entries at the extents the scalars give
    const int64_t *v = tables;
    for (size_t t = 0; t < c->tableParams.size(); ++t) {
      std::vector<int64_t> ext;
      int64_t words = 0;
      if (!tableShape(c, (int)t, bd, ext, words, err))
        return -1;
      bd.tables[c->desc.params[c->tableParams[t]].name].assign(v, v + words);
      v += words;
    }
  }
  int64_t n;
  if (!bufferElems(c->desc, bd, b, n, err))
    return -1;
  return n;
}

int64_t purlinCollBufferElems(purlinColl_t c, const int64_t *scalars, int b) {
  return purlinCollBufferElemsTables(c, scalars, nullptr, b);
}

int64_t purlinCollTableExtent(purlinColl_t c, const int64_t *scalars, int t,
                              int dim) {
  if (!c || t < 0 || t >= (int)c->tableParams.size() ||
      (!scalars && !c->scalarNames.empty()))
    return -1;
  const Param &p = c->desc.params[c->tableParams[t]];
  if (dim < 0 || dim >= (int)p.dims.size())
    return -1;
  Binding bd;
  makeBinding(c, scalars, bd);
  int64_t n;
  std::string err;
  return evalParamExpr(c->desc, bd, p.dims[dim], n, err) ? n : -1;
}

int64_t purlinCollTableWords(purlinColl_t c, const int64_t *scalars) {
  if (!c || (!scalars && !c->scalarNames.empty()))
    return -1;
  Binding bd;
  makeBinding(c, scalars, bd);
  int64_t total = 0;
  for (size_t t = 0; t < c->tableParams.size(); ++t) {
    std::vector<int64_t> ext;
    int64_t words = 0;
    std::string err;
    if (!tableShape(c, (int)t, bd, ext, words, err))
      return -1;
    total += words;
  }
  return total;
}

} // extern "C"
