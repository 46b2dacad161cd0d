// Atom lowering of an epilogue: see CodegenEpilogue.h.
#include "CodegenEpilogue.h"

#include "purlin/spec/Collective.h"
#include "purlin/spec/Epilogue.h"
#include "purlin/spec/Exec.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>
#include <vector>

namespace purlin {

namespace {
struct EpilogueEmitter {
  std::ostream &os;
  const Collective &c;
  const std::function<std::string(const Expr &)> &index;

  /// Whether a call is a row reduction (rowsum, rowmax).
  static bool reduces(const Expr &e) {
    const EpiFunction *f = epiFunction(e.name());
    return f && f->rowReduction;
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
      return "float(" + index(e) + ")";
    }
    case Expr::Kind::Table:
      return "x.load(" + std::to_string(c.bufferIndex(e.name())) + ", " +
             index(e.operands()[0]) + ")";
    case Expr::Kind::Call: {
      const bool rowReduction = reduces(e);
      std::vector<std::string> args;
      // a reduction's argument is element code (its fold), hoisted or not
      for (auto &o : e.operands())
        args.push_back(value(o, cl, folds, uni, letU, rowReduction ? false : hoisted));
      if (rowReduction) {
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
    if (e.kind() == Expr::Kind::Call && reduces(e))
      return true;
    for (auto &o : e.operands())
      if (!rowUniform(o, cl))
        return false;
    return true;
  }

  /// Whether `text` holds the name `tok` (not as part of a longer name).
  static bool uses(const std::string &text, const std::string &tok) {
    for (size_t at = text.find(tok); at != std::string::npos;
         at = text.find(tok, at + 1)) {
      const size_t end = at + tok.size();
      const bool before = at > 0 && (std::isalnum((unsigned char)text[at - 1]) ||
                                     text[at - 1] == '_');
      const bool after = end < text.size() &&
                         (std::isalnum((unsigned char)text[end]) || text[end] == '_');
      if (!before && !after)
        return true;
    }
    return false;
  }

  /// The first pass that uses each uniform value u[k]: a fold's argument
  /// is used in its pass, a store in the last, a let where its uses are,
  /// a uniform value where the uniform values using it are. Not used at
  /// all: the last pass.
  static std::vector<size_t>
  firstPasses(const std::vector<std::pair<int, std::string>> &folds,
              const std::vector<std::pair<std::string, std::string>> &lets,
              const std::vector<std::string> &stores,
              const std::vector<std::string> &uni) {
    const size_t nuni = uni.size();
    const size_t last = folds.size(), none = last + 1;
    // Where each let is first used, to a fixed point (lets use lets).
    std::vector<size_t> letFirst(lets.size(), none);
    auto mark = [&](const std::string &text, size_t pass, bool &changed) {
      for (size_t l = 0; l < lets.size(); ++l)
        if (pass < letFirst[l] && uses(text, lets[l].first)) {
          letFirst[l] = pass;
          changed = true;
        }
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t f = 0; f < folds.size(); ++f)
        mark(folds[f].second, f, changed);
      for (const std::string &v : stores)
        mark(v, last, changed);
      for (size_t l = 0; l < lets.size(); ++l)
        if (letFirst[l] != none)
          mark(lets[l].second, letFirst[l], changed);
    }
    std::vector<size_t> first(nuni, none);
    for (size_t k = 0; k < nuni; ++k) {
      const std::string tok = "u[" + std::to_string(k) + "]";
      for (size_t f = 0; f < folds.size(); ++f)
        if (uses(folds[f].second, tok))
          first[k] = std::min(first[k], f);
      for (const std::string &v : stores)
        if (uses(v, tok))
          first[k] = std::min(first[k], last);
      for (size_t l = 0; l < lets.size(); ++l)
        if (letFirst[l] != none && uses(lets[l].second, tok))
          first[k] = std::min(first[k], letFirst[l]);
    }
    // u[j] may read u[k], k < j (a hoisted let): u[k] is needed as early.
    for (size_t j = nuni; j-- > 0;)
      for (size_t k = 0; k < j; ++k)
        if (first[j] < first[k] && uses(uni[j], "u[" + std::to_string(k) + "]"))
          first[k] = first[j];
    for (size_t k = 0; k < nuni; ++k)
      if (first[k] == none)
        first[k] = last;
    return first;
  }

  // An epilogue's struct (exec/Epilogue.h): its statements per element and
  // pass; pass k folds row reduction k and returns, the last pass stores.
  void epilogue(size_t k) {
    const Clause &cl = c.clauses[k];
    std::vector<std::pair<int, std::string>> folds;
    std::vector<std::string> uni;
    std::map<std::string, size_t> letU; // lets whose value is u[k]
    std::ostringstream body;
    std::vector<std::pair<std::string, std::string>> lets; // v_NAME, value
    std::vector<std::string> stores;                       // stored values
    for (const EpiStmt &st : cl.epilogue.stmts) {
      size_t before = folds.size();
      std::string v = value(st.value, cl, folds, uni, letU);
      if (!st.let.empty() && v.rfind("u[", 0) == 0) // the whole value hoisted
        letU[st.let] = std::stoul(v.substr(2));
      if (!st.let.empty())
        lets.push_back({"v_" + st.let, v});
      else
        stores.push_back(v);
      for (size_t f = before; f < folds.size(); ++f)
        body << "    if (pass == " << f << ") {\n      acc = purlin_epi_fold("
             << folds[f].first << ", acc, " << folds[f].second
             << ");\n      return;\n    }\n";
      if (!st.let.empty())
        body << "    const float v_" << st.let << " = " << v << "; (void)v_"
             << st.let << ";\n";
      else
        body << "    if (pass == kReductions)\n      x.store("
             << c.bufferIndex(st.buffer) << ", " << index(st.index) << ", "
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
       << "  // the row-uniform values (u), once per row from the first pass\n"
       << "  // that uses each (a value that reads a row reduction is used only\n"
       << "  // in later passes)\n"
       << "  static constexpr int kUniforms = " << uni.size() << ";\n"
       << "  template <class X>\n  PURLIN_HD static void uniform(const X &x, int pass, "
          "const int64_t *c, const Params &P, const float *red, float *u) {\n"
       << "    (void)x; (void)pass; (void)c; (void)P; (void)red; (void)u;\n";
    const std::vector<size_t> first = firstPasses(folds, lets, stores, uni);
    for (size_t k = 0; k < uni.size(); ++k)
      os << "    if (pass >= " << first[k] << ")\n      u[" << k << "] = " << uni[k]
         << ";\n";
    os << "  }\n"
       << "  template <class X>\n  PURLIN_HD static void element(const X &x, int pass, "
          "const int64_t *c, const Params &P, float &acc, const float *red, const float *u) {\n"
       << "    (void)pass; (void)c; (void)P; (void)acc; (void)red; (void)u;\n"
       << "    const float recv = x.recv(); (void)recv;\n"
       << body.str() << "  }\n};\n\n";
  }
};
} // namespace

void emitEpilogue(std::ostream &os, const Collective &c, size_t k,
                  const std::function<std::string(const Expr &)> &index) {
  EpilogueEmitter{os, c, index}.epilogue(k);
}

} // namespace purlin
