// The plain description: a line-based text form of a Collective
// (purlinc --emit=desc), which generated code embeds and runtimes read.
#include "purlin/spec/Collective.h"
#include "purlin/spec/ExprParse.h"

#include <algorithm>
#include <random>
#include <set>
#include <sstream>

namespace purlin {

//===----------------------------------------------------------------------===//
// The plain description
//===----------------------------------------------------------------------===//
namespace {
std::string rankText(const RankSel &r) { return rankSelText(r); }
} // namespace

std::string writeDesc(const Collective &c) {
  std::ostringstream os;
  os << "purlin-desc 1\n";
  os << "collective " << c.name << "\n";
  for (auto &p : c.params) {
    os << "param " << p.name << " " << paramKindName(p.kind);
    if (p.kind == ParamKind::Table) {
      for (auto &d : p.dims)
        os << " [" << d.str() << "]";
      os << " max [" << p.max.str() << "]";
    }
    if (!p.bound.empty())
      os << " = " << p.bound;
    os << "\n";
  }
  for (auto &b : c.buffers)
    os << "buffer " << (b.role == BufferRole::In ? "in" : "out") << " "
       << b.name << " " << b.dtype << " [" << b.size.str() << "]\n";
  for (auto &cl : c.clauses) {
    os << "clause " << (cl.opParam.empty() ? redOpName(cl.op) : cl.opParam)
       << "\n";
    for (auto &d : cl.dims)
      os << "  dim " << d.name << " [" << d.extent.str() << "]\n";
    os << "  from " << cl.from.buffer << " @ [" << rankText(cl.from.rank)
       << "] [" << cl.from.index.str() << "]\n";
    os << "  to " << cl.to.buffer << " @ [" << rankText(cl.to.rank) << "] ["
       << cl.to.index.str() << "]\n";
    if (!cl.epilogue.empty()) { // `rows n ...`, then `let NAME [V]`, `store BUF [I] [V]`
      os << "  rows";
      for (auto &r : cl.epilogue.rows)
        os << " " << r;
      os << "\n";
      for (auto &st : cl.epilogue.stmts) {
        if (st.let.empty())
          os << "  store " << st.buffer << " [" << st.index.str() << "] ["
             << st.value.str() << "]\n";
        else
          os << "  let " << st.let << " [" << st.value.str() << "]\n";
      }
    }
    os << "end\n";
  }
  return os.str();
}

namespace {
// Splits "a b [expr] c [expr]" into words, keeping bracketed text whole
// (without the outer brackets).
bool splitWords(const std::string &line, std::vector<std::string> &out,
                std::vector<bool> &bracketed) {
  size_t i = 0;
  while (i < line.size()) {
    if (std::isspace((unsigned char)line[i])) {
      ++i;
      continue;
    }
    if (line[i] == '[') {
      int depth = 0;
      size_t b = i;
      for (; i < line.size(); ++i) {
        if (line[i] == '[')
          ++depth;
        else if (line[i] == ']' && --depth == 0)
          break;
      }
      if (i >= line.size())
        return false;
      out.push_back(line.substr(b + 1, i - b - 1));
      bracketed.push_back(true);
      ++i;
      continue;
    }
    size_t b = i;
    while (i < line.size() && !std::isspace((unsigned char)line[i]))
      ++i;
    out.push_back(line.substr(b, i - b));
    bracketed.push_back(false);
  }
  return true;
}
} // namespace

bool readDesc(const std::string &text, Collective &out, std::string &error) {
  out = Collective();
  std::istringstream is(text);
  std::string line;
  int lineNo = 0;
  Clause *cur = nullptr;
  bool header = false;
  std::string pendingBound;
  auto fail = [&](const std::string &m) {
    error = "desc line " + std::to_string(lineNo) + ": " + m;
    return false;
  };
  auto expr = [&](const std::string &s, Expr &e) {
    std::string err;
    e = Expr::parse(s, err);
    if (e.isNull())
      return fail("bad expression '" + s + "': " + err);
    return true;
  };
  auto access = [&](const std::vector<std::string> &w,
                    const std::vector<bool> &br, Access &a) {
    if (w.size() != 5 || w[2] != "@" || !br[3] || !br[4])
      return fail("expected 'BUFFER @ [RANK] [INDEX]'");
    a.buffer = w[1];
    std::string err;
    if (!parseRankSelText(w[3], a.rank, err))
      return fail("bad rank '" + w[3] + "': " + err);
    return expr(w[4], a.index);
  };
  while (std::getline(is, line)) {
    ++lineNo;
    std::vector<std::string> w;
    std::vector<bool> br;
    if (!splitWords(line, w, br))
      return fail("unbalanced '['");
    if (w.empty() || w[0][0] == '#')
      continue;
    const std::string &k = w[0];
    SrcLoc loc{lineNo, 1};
    if (!header) {
      if (k != "purlin-desc" || w.size() != 2 || w[1] != "1")
        return fail("expected 'purlin-desc 1'");
      header = true;
    } else if (k == "collective" && w.size() == 2) {
      out.name = w[1];
      out.loc = loc;
    } else if (k == "param" && w.size() >= 3) {
      if (w.size() >= 5 && w[w.size() - 2] == "=" && !br.back()) {
        pendingBound = w.back();
        w.resize(w.size() - 2);
        br.resize(br.size() - 2);
      } else
        pendingBound.clear();
      Param p;
      p.bound = pendingBound;
      p.name = w[1];
      p.loc = loc;
      const std::string &kind = w[2];
      if (!parseParamKind(kind, p.kind))
        return fail("unknown parameter kind '" + kind + "'");
      if (p.kind == ParamKind::Table) {
        size_t i = 3;
        for (; i < w.size() && br[i]; ++i) {
          Expr e;
          if (!expr(w[i], e))
            return false;
          p.dims.push_back(e);
        }
        if (i + 2 != w.size() || w[i] != "max" || !br[i + 1])
          return fail("expected 'param NAME table [EXT]... max [EXPR]'");
        if (!expr(w[i + 1], p.max))
          return false;
      }
      out.params.push_back(p);
    } else if (k == "buffer" && w.size() == 5 && br[4]) {
      Buffer b;
      if (w[1] == "in")
        b.role = BufferRole::In;
      else if (w[1] == "out")
        b.role = BufferRole::Out;
      else
        return fail("expected 'in' or 'out'");
      b.name = w[2];
      b.dtype = w[3];
      b.loc = loc;
      if (!expr(w[4], b.size))
        return false;
      out.buffers.push_back(b);
    } else if (k == "clause" && w.size() == 2) {
      out.clauses.emplace_back();
      cur = &out.clauses.back();
      cur->loc = loc;
      if (!parseRedOp(w[1], cur->op))
        cur->opParam = w[1]; // an Op parameter; checkStructure verifies it
    } else if (k == "dim" && cur && w.size() == 3 && br[2]) {
      Dim d;
      d.name = w[1];
      d.loc = loc;
      if (!expr(w[2], d.extent))
        return false;
      cur->dims.push_back(d);
    } else if (k == "from" && cur) {
      if (!access(w, br, cur->from))
        return false;
      cur->from.loc = loc;
    } else if (k == "to" && cur) {
      if (!access(w, br, cur->to))
        return false;
      cur->to.loc = loc;
    } else if (k == "rows" && cur && w.size() >= 2) {
      cur->epilogue.loc = loc;
      cur->epilogue.rows.assign(w.begin() + 1, w.end());
    } else if (k == "let" && cur && w.size() == 3 && br[2]) {
      EpiStmt st;
      st.let = w[1];
      st.loc = st.valueLoc = loc;
      if (!expr(w[2], st.value))
        return false;
      cur->epilogue.stmts.push_back(st);
    } else if (k == "store" && cur && w.size() == 4 && br[2] && br[3]) {
      EpiStmt st;
      st.buffer = w[1];
      st.loc = st.valueLoc = loc;
      if (!expr(w[2], st.index) || !expr(w[3], st.value))
        return false;
      cur->epilogue.stmts.push_back(st);
    } else if (k == "end" && cur) {
      cur = nullptr;
    } else {
      return fail("unexpected '" + line + "'");
    }
  }
  if (!header)
    return fail("empty description");
  if (cur)
    return fail("clause without 'end'");
  return true;
}

} // namespace purlin
