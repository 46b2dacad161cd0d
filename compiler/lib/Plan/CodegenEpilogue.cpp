// Atom lowering of an epilogue: see CodegenEpilogue.h.
#include "CodegenEpilogue.h"

#include "purlin/spec/Collective.h"
#include "purlin/spec/Epilogue.h"
#include "purlin/spec/Exec.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

namespace purlin {

namespace {
struct EpilogueEmitter {
  std::ostream &os;
  const Collective &c;
  const std::function<std::string(const Expr &)> &index;
  /// The vector form's loads (buffer, index of the vector's first element)
  /// while its body is printed; null for the element form.
  mutable std::vector<std::pair<int, std::string>> *vecLoads = nullptr;
  /// Whether every access of the vector form steps by one element along
  /// the row (cleared by value() and the stores).
  mutable bool vecOk = true;

  /// The step of an index expression per step of the clause's last
  /// coordinate (the row's one inner coordinate, in the vector form), where
  /// it is a constant; nothing where it is not (a coefficient that is a
  /// parameter, or an index that is not affine in the coordinate).
  static std::optional<int64_t> stepIn(const Expr &e, const std::string &v) {
    if (!e.mentions(v))
      return 0;
    const auto &o = e.operands();
    switch (e.kind()) {
    case Expr::Kind::Var:
      return 1; // v itself
    case Expr::Kind::Neg:
      if (auto a = stepIn(o[0], v))
        return -*a;
      return std::nullopt;
    case Expr::Kind::Add:
    case Expr::Kind::Sub: {
      auto a = stepIn(o[0], v), b = stepIn(o[1], v);
      if (!a || !b)
        return std::nullopt;
      return e.kind() == Expr::Kind::Add ? *a + *b : *a - *b;
    }
    case Expr::Kind::Mul:
      for (int k = 0; k < 2; ++k)
        if (o[k].kind() == Expr::Kind::Const)
          if (auto a = stepIn(o[1 - k], v))
            return o[k].constValue() * *a;
      return std::nullopt;
    default: // a division, modulo or table lookup of the coordinate
      return std::nullopt;
    }
  }
  /// "Launch" where buffer `buf` has the launch's element type (it declares
  /// no concrete type of its own): EpiRank's and EpiVecRank's forms that
  /// skip the run-time test of Shared::bufDType; "" where it may have its
  /// own (the tested forms).
  std::string typed(int buf) const {
    DType t;
    return declaredDType(c, c.buffers[buf], t) ? "" : "Launch";
  }
  bool unitStep(const Expr &e, const Clause &cl) const {
    return stepIn(e, cl.dims.back().name) == std::optional<int64_t>(1);
  }

  /// Whether a value reads a row reduction (through its lets too).
  bool readsReduction(const Expr &e, const Clause &cl) const {
    if (e.kind() == Expr::Kind::Call && reduces(e))
      return true;
    if (e.kind() == Expr::Kind::Var)
      for (auto &st : cl.epilogue.stmts)
        if (st.let == e.name())
          return readsReduction(st.value, cl);
    for (auto &o : e.operands())
      if (readsReduction(o, cl))
        return true;
    return false;
  }

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
  /// or a name are computed once per row instead of per element:
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
      if (e.kind() == Expr::Kind::Table)
        return text; // a load: its own u[k] already
      return uniformSlot(uni, text);
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
    case Expr::Kind::Table: {
      const std::string at = index(e.operands()[0]);
      const int buf = c.bufferIndex(e.name());
      if (vecLoads && !hoisted) { // the vector form: a slot loaded up front
        if (!unitStep(e.operands()[0], cl))
          vecOk = false;
        return "ld" + std::to_string(slotOf(*vecLoads, {buf, at})) + "[j]";
      }
      // A row-uniform load is a uniform value of its own (firstPasses
      // issues it in pass 0, so its latency overlaps the first pass).
      if (hoisted)
        return uniformSlot(uni, "x.load" + typed(buf) + "(" + std::to_string(buf) +
                                    ", " + at + ")");
      return "x.load(" + std::to_string(buf) + ", " + at + ")";
    }
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
      std::string b = value(e.operands()[1], cl, folds, uni, letU, hoisted);
      // Per element, by a row-uniform value that reads a row reduction
      // (the norm's 1/rms): purlin_epi_div_row, a multiply by the
      // divisor's reciprocal on a GPU (one reciprocal a row instead of a
      // division an element; within the tolerance such values have,
      // docs/language.md), the true division on the host.
      if (e.kind() == Expr::Kind::Div && !hoisted &&
          rowUniform(e.operands()[1], cl) && readsReduction(e.operands()[1], cl))
        return "purlin_epi_div_row(" + a + ", " + b + ")";
      return "(" + a + op + b + ")";
    }
    }
  }

  /// Where `v` is in `slots`, added at the end where it is new.
  template <class T>
  static size_t slotOf(std::vector<T> &slots, const T &v) {
    const size_t k = std::find(slots.begin(), slots.end(), v) - slots.begin();
    if (k == slots.size())
      slots.push_back(v);
    return k;
  }
  /// u[k] for the uniform value `text`, added to `uni` where it is new.
  static std::string uniformSlot(std::vector<std::string> &uni,
                                 const std::string &text) {
    return "u[" + std::to_string(slotOf(uni, text)) + "]";
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
    // A load reads an input, there from the start: issued in pass 0.
    for (size_t k = 0; k < nuni; ++k)
      if (uni[k].rfind("x.load", 0) == 0)
        first[k] = 0;
    return first;
  }

  /// The statements of one element, in pass `pass` (the body of element()
  /// or, `vec`, of elementVec's loop over element j: inputs read from the
  /// slots vecLoads names, stores into st<k>[j] for stored buffer k, and a
  /// fold's pass ending the element with `continue`). Collects the folds,
  /// the uniform values, the lets and stored values (for firstPasses), and
  /// in the vector form the stores' buffer and first index.
  std::string statements(const Clause &cl, bool vec,
                         std::vector<std::pair<int, std::string>> &folds,
                         std::vector<std::string> &uni,
                         std::vector<std::pair<std::string, std::string>> &lets,
                         std::vector<std::string> &stores,
                         std::vector<std::pair<int, std::string>> &vstores) {
    std::map<std::string, size_t> letU; // lets whose value is u[k]
    std::ostringstream body;
    const char *in = vec ? "      " : "    ";
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
        body << in << "if (pass == " << f << ") {\n" << in << "  acc = purlin_epi_fold("
             << folds[f].first << ", acc, " << folds[f].second << ");\n"
             << in << "  " << (vec ? "continue" : "return") << ";\n" << in << "}\n";
      if (!st.let.empty()) {
        body << in << "const float v_" << st.let << " = " << v << "; (void)v_"
             << st.let << ";\n";
        continue;
      }
      const int buf = c.bufferIndex(st.buffer);
      if (!vec) {
        body << in << "if (pass == kReductions)\n" << in << "  x.store(" << buf << ", "
             << index(st.index) << ", " << v << ");\n";
        continue;
      }
      for (auto &o : vstores)
        vecOk = vecOk && o.first != buf; // one store per buffer
      vecOk = vecOk && unitStep(st.index, cl);
      body << in << "if (pass == kReductions)\n" << in << "  st" << vstores.size()
           << "[j] = " << v << ";\n";
      vstores.push_back({buf, index(st.index)});
    }
    return body.str();
  }

  /// The vector form of the element code (elementVec, exec/Epilogue.h's
  /// register row): where the row has one inner coordinate and every input
  /// read and output stored per element steps by one element along it, the
  /// kEpiVec elements of a vector run together: each input's kEpiVec values
  /// are loaded at once before any is used, the statements run for the
  /// elements in ascending order (the folds in element order, as element()
  /// does), and each output's values are stored at once after the last.
  /// Empty when the vector form does not apply (or its uniform values
  /// would not be element()'s: `elementUni`).
  std::string vectorForm(const Clause &cl, const std::vector<std::string> &elementUni) {
    if (cl.dims.size() != cl.epilogue.rows.size() + 1)
      return "";
    std::vector<std::pair<int, std::string>> folds, loads, vstores;
    std::vector<std::string> uni, stores;
    std::vector<std::pair<std::string, std::string>> lets;
    vecLoads = &loads;
    vecOk = true;
    const std::string body = statements(cl, true, folds, uni, lets, stores, vstores);
    vecLoads = nullptr;
    // the body reads u[k] as element() does: the same uniform values, in
    // the same order (one traversal of the same statements)
    if (!vecOk || uni != elementUni)
      return "";
    std::ostringstream os;
    os << "  // the vector form's loads, announced before the received values\n"
       << "  // are loaded (x.prefetch8)\n"
       << "  template <class X>\n  PURLIN_HD static void prefetchVec(const X &x, "
          "const int64_t *c, const Params &P) {\n    (void)x; (void)c; (void)P;\n";
    for (auto &l : loads)
      os << "    x.prefetch8" << typed(l.first) << "(" << l.first << ", " << l.second
         << ");\n";
    os << "  }\n";
    os << "  // the vector form's inputs, each loaded as one vector (x.load8)\n"
       << "  // into ld[k]: once a row where the register row keeps them\n"
       << "  // (one-shot), else before each pass's elementVec\n"
       << "  static constexpr int kVecLoads = " << loads.size() << ";\n"
       << "  template <class X>\n  PURLIN_HD static void loadVec(const X &x, "
          "const int64_t *c, const Params &P, float (*ld)[kEpiVec]) {\n"
       << "    (void)x; (void)c; (void)P; (void)ld;\n";
    for (size_t k = 0; k < loads.size(); ++k)
      os << "    x.load8" << typed(loads[k].first) << "(" << loads[k].first << ", "
         << loads[k].second << ", ld[" << k << "]);\n";
    os << "  }\n";
    os << "  // the vector form: kEpiVec elements of the row from c on, the\n"
       << "  // received values in rv, the inputs in ld (loadVec), each output\n"
       << "  // stored as one vector (x.store8)\n"
       << "  static constexpr bool kVecForm = true;\n"
       << "  template <class X>\n  PURLIN_HD static void elementVec(const X &x, int pass, "
          "const int64_t *c, const Params &P, const float *rv, const float (*ld)[kEpiVec], "
          "float &acc, const float *red, const float *u) {\n"
       << "    (void)pass; (void)c; (void)P; (void)ld; (void)acc; (void)red; (void)u;\n";
    for (size_t k = 0; k < loads.size(); ++k)
      os << "    const float *ld" << k << " = ld[" << k << "];\n";
    for (size_t k = 0; k < vstores.size(); ++k)
      os << "    float st" << k << "[kEpiVec];\n";
    os << "PURLIN_UNROLL\n    for (int j = 0; j < kEpiVec; ++j) {\n"
       << "      const float recv = rv[j]; (void)recv;\n"
       << body << "    }\n";
    if (!vstores.empty()) {
      os << "    if (pass == kReductions) {\n";
      for (size_t k = 0; k < vstores.size(); ++k)
        os << "      x.store8" << typed(vstores[k].first) << "(" << vstores[k].first << ", "
           << vstores[k].second << ", st" << k << ");\n";
      os << "    }\n";
    }
    os << "  }\n";
    return os.str();
  }

  // An epilogue's struct (exec/Epilogue.h): its statements per element and
  // pass; pass k folds row reduction k and returns, the last pass stores.
  void epilogue(size_t k) {
    const Clause &cl = c.clauses[k];
    std::vector<std::pair<int, std::string>> folds, none;
    std::vector<std::string> uni;
    std::vector<std::pair<std::string, std::string>> lets; // v_NAME, value
    std::vector<std::string> stores;                       // stored values
    const std::string body = statements(cl, false, folds, uni, lets, stores, none);
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
       << "  // the row-uniform values (u), each once per row in the first\n"
       << "  // pass that uses it (a value that reads a row reduction is used\n"
       << "  // only in later passes; a load in pass 0)\n"
       << "  static constexpr int kUniforms = " << uni.size() << ";\n"
       << "  template <class X>\n  PURLIN_HD static void uniform(const X &x, int pass, "
          "const int64_t *c, const Params &P, const float *red, float *u) {\n"
       << "    (void)x; (void)pass; (void)c; (void)P; (void)red; (void)u;\n";
    const std::vector<size_t> first = firstPasses(folds, lets, stores, uni);
    for (size_t k = 0; k < uni.size(); ++k)
      os << "    if (pass == " << first[k] << ")\n      u[" << k << "] = " << uni[k]
         << ";\n";
    os << "  }\n"
       << "  template <class X>\n  PURLIN_HD static void element(const X &x, int pass, "
          "const int64_t *c, const Params &P, float &acc, const float *red, const float *u) {\n"
       << "    (void)pass; (void)c; (void)P; (void)acc; (void)red; (void)u;\n"
       << "    const float recv = x.recv(); (void)recv;\n"
       << body << "  }\n";
    const std::string vec = vectorForm(cl, uni);
    os << (vec.empty() ? "  static constexpr bool kVecForm = false;\n"
                         "  static constexpr int kVecLoads = 0;\n"
                       : vec)
       << "};\n\n";
  }
};
} // namespace

void emitEpilogue(std::ostream &os, const Collective &c, size_t k,
                  const std::function<std::string(const Expr &)> &index) {
  EpilogueEmitter{os, c, index}.epilogue(k);
}

} // namespace purlin
