// The source stages of purlinc, before the IR: read a `.purlin` file, parse
// it (FILE:LINE:COL diagnostics with the line and a caret), bind parameters
// given on the command line, and verify it with the spec's rules at the
// source positions.
#include "purlin/Pipeline.h"

#include "purlin/Frontend/Parser.h"
#include "purlin/spec/Params.h"
#include "purlin/spec/Verify.h"

#include "llvm/Support/MemoryBuffer.h"

namespace purlin {

bool loadSource(const std::string &path, Source &out, std::string &error) {
  auto buf = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buf) {
    error = "cannot read '" + path + "': " + buf.getError().message();
    return false;
  }
  out.path = path == "-" ? "<stdin>" : path;
  out.text = (*buf)->getBuffer().str();
  return true;
}

void printDiag(llvm::raw_ostream &os, const Source &src, const Diag &d,
               const char *severity) {
  if (d.loc.line <= 0) {
    os << src.path << ": " << severity << ": " << d.message << "\n";
    return;
  }
  os << src.path << ":" << d.loc.line << ":" << d.loc.col << ": " << severity
     << ": " << d.message << "\n";
  // The source line, then a caret under the column (tabs kept, so that the
  // caret lines up however the terminal expands them).
  size_t begin = 0;
  for (int l = 1; l < d.loc.line && begin != std::string::npos; ++l) {
    begin = src.text.find('\n', begin);
    if (begin != std::string::npos)
      ++begin;
  }
  if (begin == std::string::npos || begin > src.text.size())
    return;
  size_t end = src.text.find('\n', begin);
  std::string line = src.text.substr(
      begin, end == std::string::npos ? std::string::npos : end - begin);
  if (!line.empty() && line.back() == '\r')
    line.pop_back();
  std::string caret;
  for (int i = 0; i + 1 < d.loc.col && i < (int)line.size(); ++i)
    caret += line[i] == '\t' ? '\t' : ' ';
  os << line << "\n" << caret << "^\n";
}

bool parseSource(const Source &src, Collective &out, llvm::raw_ostream &errs) {
  Diag d;
  if (parsePurlin(src.text, out, d))
    return true;
  printDiag(errs, src, d);
  return false;
}

namespace {
// A decimal int64 (the layout dialect holds bound values as i64).
bool isInteger(const std::string &s) {
  int64_t v;
  return !s.empty() && !llvm::StringRef(s).getAsInteger(10, v);
}

bool checkValue(const Param &p, const std::string &v, std::string &error) {
  DType t;
  RedOp r;
  switch (p.kind) {
  case ParamKind::Type:
    if (parseDType(v, t))
      return true;
    error = "unknown element type '" + v + "' for '" + p.name + "' (";
    for (int i = 0; i < kNumDTypes; ++i)
      error += std::string(i ? ", " : "") + dtypeName((DType)i);
    error += ")";
    return false;
  case ParamKind::Op:
    if (parseRedOp(v, r) && r != RedOp::Copy)
      return true;
    error = "unknown reduction op '" + v + "' for '" + p.name +
            "' (sum, prod, min, max or avg)";
    return false;
  case ParamKind::Table: {
    size_t b = 0;
    for (;;) {
      size_t e = v.find(':', b);
      std::string part = v.substr(b, e == std::string::npos ? e : e - b);
      if (!isInteger(part)) {
        error = "table '" + p.name + "' needs ':'-separated integers, got '" +
                v + "'";
        return false;
      }
      if (e == std::string::npos)
        return true;
      b = e + 1;
    }
  }
  default:
    if (isInteger(v))
      return true;
    error = "'" + p.name + "' (" + paramKindName(p.kind) +
            ") needs an integer, got '" + v + "'";
    return false;
  }
}
} // namespace

bool bindParams(Collective &c, const BindOptions &opts, std::string &error) {
  auto bindKind = [&](ParamKind k, const std::string &v) {
    for (Param &p : c.params)
      if (p.kind == k) {
        if (!checkValue(p, v, error))
          return false;
        p.bound = v;
      }
    return true;
  };
  if ((opts.ranks && !bindKind(ParamKind::Ranks, std::to_string(*opts.ranks))) ||
      (opts.count && !bindKind(ParamKind::Count, std::to_string(*opts.count))) ||
      (opts.root && !bindKind(ParamKind::Root, std::to_string(*opts.root))) ||
      (!opts.dtype.empty() && !bindKind(ParamKind::Type, opts.dtype)) ||
      (!opts.op.empty() && !bindKind(ParamKind::Op, opts.op)))
    return false;
  for (const std::string &d : opts.defines) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0) {
      error = "expected NAME=VALUE after -D, got '" + d + "'";
      return false;
    }
    std::string name = d.substr(0, eq), value = d.substr(eq + 1);
    Param *p = nullptr;
    std::string names;
    for (Param &q : c.params) {
      if (q.name == name)
        p = &q;
      names += (names.empty() ? "" : ", ") + q.name;
    }
    if (!p) {
      error = "collective '" + c.name + "' has no parameter '" + name +
              "' (its parameters: " + names + ")";
      return false;
    }
    if (!checkValue(*p, value, error))
      return false;
    p->bound = value;
  }
  return true;
}

namespace {
/// The executor holds a fixed number of table entries (exec::kMaxTableWords):
/// tables whose size grows with R limit the rank count. An R bound beyond
/// that is an error; a free R a warning that says the limit and why, so that
/// a run at more ranks is no surprise.
void checkTableCapacity(const Collective &c, std::vector<Diag> &errors,
                        std::vector<Diag> &warnings) {
  std::string why;
  const int maxR = maxRanksForTables(c, why);
  if (maxR >= exec::kMaxRanks)
    return;
  const Param *rp = c.ranksParam();
  Binding b;
  std::string err;
  if (rp && !rp->bound.empty() && applyBoundParams(c, b, err)) {
    if (b.ranks(c) > maxR)
      errors.push_back({rp->loc, "'" + c.name + "' runs on at most " +
                                     std::to_string(maxR) + " ranks, not " +
                                     std::to_string(b.ranks(c)) + ": " + why});
    return;
  }
  warnings.push_back({c.loc, "'" + c.name + "' runs on at most " +
                                 std::to_string(maxR) + " ranks (runtimes "
                                 "refuse more): " + why});
}
} // namespace

bool verifySource(const Source &src, const Collective &c,
                  llvm::raw_ostream &errs) {
  std::vector<Diag> errors, warnings;
  bool ok = verifyCollective(c, errors, warnings);
  if (ok)
    checkTableCapacity(c, errors, warnings);
  for (const Diag &d : warnings)
    printDiag(errs, src, d, "warning");
  for (const Diag &d : errors)
    printDiag(errs, src, d, "error");
  return ok && errors.empty();
}

} // namespace purlin
