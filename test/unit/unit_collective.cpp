// Unit tests of purlin/spec/Collective.h: the plain description (write/read
// round trips of every example, given as files from `purlinc --emit=desc`,
// and of collectives built here; malformed descriptions), checkStructure,
// checkBinding's errors, parseBindingList, applyBoundParams, sampleBindings
// (with values bound at compile time) and BoundCollective's visiting order.
//   purlin-unit_collective [DESC_FILE...]
#include "check.h"

#include "purlin/spec/Reference.h"

#include <fstream>
#include <set>
#include <sstream>

using namespace purlin;

namespace {
Collective desc(const std::string &text) {
  Collective c;
  std::string err;
  CHECK_MSG(readDesc(text, c, err), err);
  return c;
}
Binding bindList(const Collective &c, const std::string &list) {
  Binding b;
  std::string err;
  CHECK_MSG(parseBindingList(c, list, b, err), err);
  return b;
}
bool contains(const std::string &s, const std::string &sub) {
  return s.find(sub) != std::string::npos;
}

// A description: read, written back identically, structurally sound, and
// every sample binding passes checkBinding and runs the reference.
void roundTrip(const std::string &text, const std::string &what) {
  purlin_test::Context ctx(what);
  Collective c;
  std::string err;
  if (!CHECK_MSG(readDesc(text, c, err), err))
    return;
  CHECK_EQ(writeDesc(c), text);
  Collective again;
  CHECK(readDesc(writeDesc(c), again, err) && writeDesc(again) == text);
  std::vector<Diag> diags;
  CHECK_MSG(checkStructure(c, diags), diags.empty() ? "" : diags[0].message);
  std::vector<Binding> samples = sampleBindings(c);
  CHECK(!samples.empty());
  for (auto &b : samples) {
    diags.clear();
    bool ok = checkBinding(c, b, diags);
    CHECK_MSG(ok, diags.empty() ? "" : diags[0].message);
    RankBuffers d;
    CHECK_MSG(allocateBuffers(c, b, d, 1, 0xAB, err) &&
                  referenceEvaluate(c, b, d, err),
              err);
  }
}

const char *kA2AV = purlin_test::kAllToAllVDesc;

void testBuiltDescs() {
  // Every parameter kind, bound values, several clauses, ops as parameters
  // and as names, fixed ranks.
  roundTrip(R"(purlin-desc 1
collective many
param R ranks = 4
param C count
param K count = 3
param root root = 1
param T type = bf16
param op redop
param cnt table [R] [K] max [K] = 0:1:2:0:1:2:0:1:2:0:1:2
buffer in x T [R*C + K]
buffer in z T [C]
buffer out y T [R*C + K]
buffer out w i32 [1]
buffer in v i32 [1]
clause op
  dim r [R]
  dim i [C]
  from x @ [*] [r*C + i]
  to y @ [r] [i]
end
clause copy
  dim k [K]
  from x @ [root] [R*C + k]
  to y @ [*] [R*C + k]
end
clause max
  dim i [C]
  from z @ [*] [i]
  to y @ [R - 1] [C + i]
end
clause copy
  dim i [1]
  from v @ [root] [i]
  to w @ [*] [i]
end
)",
            "built: every kind");
  roundTrip(kA2AV, "built: all_to_all_v");
  // Bound values apply.
  Collective c = desc(R"(purlin-desc 1
collective b
param R ranks = 3
param C count = 5
param T type = f8e5m2
param op redop = min
param cnt table [R] max [C] = 1:2:3
buffer in x T [C]
buffer out y T [C]
clause op
  dim i [C]
  from x @ [*] [i]
  to y @ [*] [i]
end
)");
  Binding b;
  std::string err;
  CHECK_MSG(applyBoundParams(c, b, err), err);
  CHECK(b.ranks(c) == 3 && b.scalars["C"] == 5 && b.dtype == DType::F8E5M2 &&
        b.redop == RedOp::Min &&
        (b.tables["cnt"] == std::vector<int64_t>{1, 2, 3}));
  CHECK(clauseOp(c.clauses[0], b) == RedOp::Min);
  CHECK(c.param("C") && c.param("C")->bound == "5" && !c.param("nope"));
  CHECK(c.ranksParam() && c.ranksParam()->name == "R");
  CHECK(c.bufferIndex("y") == 1 && c.buffer("x") && !c.buffer("q"));
  // Comments and blank lines are skipped.
  CHECK(readDesc("# a comment\n\npurlin-desc 1\ncollective k\n# more\n", c, err));
}

void testBadDescs() {
  const char *bad[] = {
      "",
      "purlin-desc 2\n",
      "collective x\n",
      "purlin-desc 1\nparam R ranks\nparam C frobs\n",
      "purlin-desc 1\nparam cnt table [R] [R]\n",
      "purlin-desc 1\nparam cnt table [R max [C]\n",
      "purlin-desc 1\nbuffer inout x T [C]\n",
      "purlin-desc 1\nbuffer in x T [C +]\n",
      "purlin-desc 1\nclause copy\n  dim i [C]\n",
      "purlin-desc 1\nclause copy\n  from x @ [*]\nend\n",
      "purlin-desc 1\nclause copy\n  from x [*] [i]\nend\n",
      "purlin-desc 1\n  dim i [C]\n",
      "purlin-desc 1\nwhat is this\n",
  };
  for (const char *t : bad) {
    Collective c;
    std::string err;
    CHECK_MSG(!readDesc(t, c, err) && contains(err, "desc line"),
              std::string("accepted: ") + t);
  }
}

void testStructure() {
  struct Case {
    const char *body; // clauses and buffers after the params
    const char *want;
  };
  const std::string head = "purlin-desc 1\ncollective s\nparam R ranks\n"
                           "param C count\nparam root root\nparam T type\n"
                           "param op redop\nparam cnt table [R] max [C]\n";
  const Case cases[] = {
      {"buffer in x T [C]\nbuffer out y T [C]\nclause copy\n  dim i [C]\n"
       "  from x @ [*] [i]\n  to y @ [*] [i]\nend\n",
       "exactly one contributor"},
      {"buffer in x T [C]\nbuffer out y T [C]\nclause sum\n  dim i [C]\n"
       "  from x @ [*] [i*i]\n  to y @ [*] [i]\nend\n",
       "affine"},
      {"buffer in x T [C]\nbuffer out y T [C]\nclause sum\n  dim i [C]\n"
       "  from x @ [*] [i]\n  to y @ [i*i] [0]\nend\n",
       "must be quasi-affine"},
      {"buffer in x T [C]\nbuffer out y T [C]\nclause sum\n  dim i [C]\n"
       "  from x @ [*] [i]\n  to y @ [R % (i + 1)] [0]\nend\n",
       "must be quasi-affine"},
      {"buffer in x T [C]\nbuffer out y T [R*C]\nclause copy\n  dim r [R]\n"
       "  dim i [C]\n  from x @ [{(r + j)%R | j in [2]}] [i]\n  to y @ [*] [r*C + i]\nend\n",
       "gives a set of ranks"},
      {"buffer in x T [C]\nbuffer out y T [C]\nclause sum\n  dim i [C]\n"
       "  from x @ [{i | i in [R]}] [i]\n  to y @ [*] [i]\nend\n",
       "hides the coordinate"},
      {"buffer in x T [C]\nbuffer out y T [C]\nclause sum\n  dim i [C]\n"
       "  from x @ [{j | j in [i]}] [i]\n  to y @ [*] [i]\nend\n",
       "unknown name 'i' in the extent of the set variable 'j'"},
      {"buffer in x T [C]\nbuffer out y T [C]\nclause sum\n  dim i [C]\n"
       "  from x @ [{j | j in [R]}] [i + j]\n  to y @ [*] [i]\nend\n",
       "unknown name 'j' in the index of 'x'"},
      {"buffer in x T [C]\nbuffer in z T [C]\nbuffer out y T [C]\nclause sum\n  dim i [C]\n"
       "  from x @ [*] [i]\n  to y @ [*] [i]\nend\n",
       "input 'z' is never read"},
      {"buffer in x T [C]\nbuffer out y T [C]\nbuffer out z T [C]\nclause sum\n  dim i [C]\n"
       "  from x @ [*] [i]\n  to y @ [*] [i]\nend\n",
       "output 'z' is never written"},
      {"buffer in x T [C]\nbuffer out y T [R*C]\nclause copy\n  dim r [R]\n  dim k [r + 1]\n"
       "  dim i [C]\n  from x @ [r] [i]\n  to y @ [k] [r*C + i]\nend\n",
       "the extent of rank coordinate 'k' may use parameters only"},
      {"buffer in x T [C]\nbuffer out y i32 [C]\nclause copy\n  dim i [C]\n"
       "  from x @ [root] [i]\n  to y @ [*] [i]\nend\n",
       "element types differ"},
      {"buffer in x T [C]\nbuffer out y T [C]\nclause copy\n  dim i [C]\n"
       "  from y @ [root] [i]\n  to x @ [*] [i]\nend\n",
       "output buffer"},
      {"buffer in x T [C]\nbuffer out y T [C]\nclause copy\n  dim i [Q]\n"
       "  from x @ [root] [i]\n  to y @ [*] [i]\nend\n",
       "unknown name 'Q'"},
      {"buffer in x T [C]\nbuffer out y T [C]\nclause copy\n  dim i [C]\n"
       "  from x @ [root] [cnt]\n  to y @ [*] [i]\nend\n",
       "subscript"},
      {"buffer in x T [C]\nbuffer out y T [C]\nclause frob\n  dim i [C]\n"
       "  from x @ [*] [i]\n  to y @ [*] [i]\nend\n",
       "not a reduction op parameter"},
      {"buffer in x T [C]\nbuffer out y T [C]\n", "names nothing"},
      {"buffer in x U [C]\nbuffer out y T [C]\nclause copy\n  dim i [C]\n"
       "  from x @ [root] [i]\n  to y @ [*] [i]\nend\n",
       "unknown element type"},
      {"buffer in x T [C]\nbuffer out x T [C]\nclause copy\n  dim i [C]\n"
       "  from x @ [root] [i]\n  to x @ [*] [i]\nend\n",
       "more than once"},
      {"buffer in x T [C]\nbuffer out y T [C*C]\nclause copy\n  dim i [C]\n"
       "  dim j [i]\n  from x @ [root] [j]\n  to y @ [*] [i*C + j]\nend\n",
       "rank coordinates and parameters only"},
  };
  for (auto &k : cases) {
    Collective c = desc(head + k.body);
    std::vector<Diag> diags;
    bool ok = checkStructure(c, diags);
    std::string all;
    for (auto &d : diags)
      all += d.message + "; ";
    CHECK_MSG(!ok && contains(all, k.want),
              std::string("want '") + k.want + "', got: " + all);
  }
  Collective noR = desc("purlin-desc 1\ncollective n\nparam C count\n"
                        "buffer in x i8 [C]\nbuffer out y i8 [C]\nclause copy\n"
                        "  dim i [C]\n  from x @ [0] [i]\n  to y @ [0] [i]\nend\n");
  std::vector<Diag> diags;
  CHECK(!checkStructure(noR, diags) && contains(diags[0].message, "rank-count"));
}

void testCheckBinding() {
  Collective a2av = desc(kA2AV);
  Collective gather = desc(R"(purlin-desc 1
collective gather
param R ranks
param C count
param T type
param root root
buffer in x T [C]
buffer out y T [R*C]
clause copy
  dim r [R]
  dim i [C]
  from x @ [r] [i]
  to y @ [root] [r*C + i]
end
)");
  struct Case {
    const Collective *c;
    const char *binding;
    const char *want;
  };
  const Case cases[] = {
      {&gather, "C=2,root=0", "'R' is not bound"},
      {&gather, "R=0,C=2,root=0", "at least 1"},
      {&gather, "R=2,C=-1,root=0", "must not be negative"},
      {&gather, "R=2,C=2,root=2", "must lie in [0, 2)"},
      {&gather, "R=2,C=2,root=-1", "must lie in [0, 2)"},
      {&gather, "R=2,C=2", "'root' is not bound"},
      {&a2av, "R=2,M=2", "table 'cnt' is not bound"},
      {&a2av, "R=2,M=2,cnt=1:1:1", "needs 4 values, got 3"},
      {&a2av, "R=2,M=2,cnt=1:1:1:3", "outside [0, M = 2]"},
      {&a2av, "R=2,M=2,cnt=1:-1:1:1", "outside [0, M = 2]"},
  };
  for (auto &k : cases) {
    Binding b = bindList(*k.c, k.binding);
    std::vector<Diag> diags;
    bool ok = checkBinding(*k.c, b, diags);
    CHECK_MSG(!ok && !diags.empty() && contains(diags[0].message, k.want),
              std::string(k.binding) + ": want '" + k.want + "', got '" +
                  (diags.empty() ? "" : diags[0].message) + "'");
  }
  // Rules that need values: bounds, ranks, collisions.
  const std::string head = "purlin-desc 1\ncollective v\nparam R ranks\n"
                           "param C count\nbuffer in x i32 [C]\n";
  const struct {
    const char *body, *binding, *want;
  } vcases[] = {
      {"buffer out y i32 [C]\nclause copy\n  dim r [R]\n  dim i [C]\n"
       "  from x @ [r] [i]\n  to y @ [0] [i]\nend\n",
       "R=2,C=3", "two names write one place"},
      {"buffer out y i32 [C]\nclause copy\n  dim r [R]\n  dim i [C]\n"
       "  from x @ [r] [i]\n  to y @ [r] [i + 1]\nend\n",
       "R=2,C=3", "out of bounds"},
      {"buffer out y i32 [C]\nclause copy\n  dim r [R]\n  dim i [C]\n"
       "  from x @ [r] [i + 1]\n  to y @ [r] [i]\nend\n",
       "R=2,C=3", "out of bounds"},
      {"buffer out y i32 [C]\nclause copy\n  dim i [C]\n"
       "  from x @ [R] [i]\n  to y @ [0] [i]\nend\n",
       "R=2,C=3", "contributor rank out of range"},
      {"buffer out y i32 [C]\nclause copy\n  dim i [C]\n"
       "  from x @ [0] [i]\n  to y @ [R - 2] [i]\nend\n",
       "R=1,C=3", "destination rank out of range"},
      {"buffer out y i32 [C - 5]\nclause copy\n  dim i [C]\n"
       "  from x @ [0] [i]\n  to y @ [0] [i]\nend\n",
       "R=1,C=3", "negative size"},
      {"buffer out y i32 [C]\nclause copy\n  dim i [C/(R - 1)]\n"
       "  from x @ [0] [i]\n  to y @ [0] [i]\nend\n",
       "R=1,C=3", "cannot be evaluated"},
      {"buffer out y i32 [2*C]\nclause copy\n  dim i [C]\n"
       "  from x @ [0] [i]\n  to y @ [0] [2*i]\nend\nclause sum\n  dim i [C]\n"
       "  from x @ [*] [i]\n  to y @ [*] [2*C - 2 - 2*i]\nend\n",
       "R=2,C=3", "two names write one place"},
      // Maps and sets of ranks.
      {"buffer out y i32 [C]\nclause copy\n  dim r [R]\n  dim i [C]\n"
       "  from x @ [r] [i]\n  to y @ [r + 1] [i]\nend\n",
       "R=2,C=3", "destination rank out of range"},
      {"buffer out y i32 [C]\nclause sum\n  dim i [C]\n"
       "  from x @ [{j % 2 | j in [R]}] [i]\n  to y @ [*] [i]\nend\n",
       "R=3,C=3", "lists rank 0 twice"},
      {"buffer out y i32 [C]\nclause sum\n  dim i [C]\n"
       "  from x @ [{j | j in [R - 2]}] [i]\n  to y @ [*] [i]\nend\n",
       "R=2,C=3", "empty contributor set"},
      {"buffer out y i32 [C]\nclause sum\n  dim i [C]\n"
       "  from x @ [{2*j | j in [R]}] [i]\n  to y @ [*] [i]\nend\n",
       "R=2,C=3", "lists rank 2, outside [0, 2)"},
      {"param G group\nbuffer out y i32 [C]\nclause sum\n  dim g [R/G]\n  dim i [C]\n"
       "  from x @ [{g*G + j | j in [G]}] [i]\n  to y @ [{g*G + j | j in [G]}] [i]\nend\n",
       "R=4,G=3,C=3", "group size 'G' = 3 must divide the rank count 4"},
      // Steps: a clause that reads an output reads what earlier ones wrote.
      {"buffer out y i32 [2*C]\nclause copy\n  dim r [R]\n  dim i [C]\n"
       "  from x @ [r] [i]\n  to y @ [r] [i]\nend\nclause copy\n  dim r [R]\n"
       "  dim i [C]\n  from y @ [r] [C + i]\n  to y @ [r] [i]\nend\n",
       "R=2,C=3", "which no earlier clause writes"},
  };
  // A step may write over what an earlier clause wrote (here: in place).
  {
    Collective c = desc(head + "buffer out y i32 [C]\nclause copy\n  dim r [R]\n  dim i [C]\n"
                               "  from x @ [r] [i]\n  to y @ [r] [i]\nend\nclause sum\n"
                               "  dim i [C]\n  from y @ [*] [i]\n  to y @ [*] [i]\nend\n");
    std::vector<Diag> diags;
    CHECK(checkStructure(c, diags) && checkBinding(c, bindList(c, "R=3,C=4"), diags));
  }
  for (auto &k : vcases) {
    Collective c = desc(head + k.body);
    std::vector<Diag> diags;
    CHECK(checkStructure(c, diags));
    Binding b = bindList(c, k.binding);
    bool ok = checkBinding(c, b, diags);
    CHECK_MSG(!ok && !diags.empty() && contains(diags.back().message, k.want),
              std::string(k.body) + ": want '" + k.want + "', got '" +
                  (diags.empty() ? "" : diags.back().message) + "'");
  }
  // The collision message names both names.
  {
    Collective c = desc(head + vcases[0].body);
    std::vector<Diag> diags;
    checkBinding(c, bindList(c, "R=2,C=3"), diags);
    CHECK(!diags.empty() && contains(diags[0].message, "(r=1, i=0)") &&
          contains(diags[0].message, "(r=0, i=0)"));
    // maxNames stops early: no collision within the first 3 names.
    diags.clear();
    CHECK(checkBinding(c, bindList(c, "R=2,C=3"), diags, 3) && diags.empty());
  }
  // Valid bindings pass, and so do counts of zero and tables of zeros.
  std::vector<Diag> diags;
  CHECK(checkBinding(a2av, bindList(a2av, "R=3,M=2,cnt=0:1:2:2:1:0:0:0:0"), diags));
  CHECK(checkBinding(a2av, bindList(a2av, "R=1,M=0,cnt=0"), diags));
  CHECK(checkBinding(gather, bindList(gather, "R=5,C=0,root=4"), diags));
  CHECK(diags.empty());
}

void testBindingList() {
  Collective c = desc(R"(purlin-desc 1
collective p
param R ranks
param C count
param T type
param op redop
param cnt table [R] max [C]
buffer in x T [C]
buffer out y T [C]
clause op
  dim i [C]
  from x @ [*] [i]
  to y @ [*] [i]
end
)");
  Binding b = bindList(c, "R=8,C=1024,T=bf16,op=max,cnt=1:2:3:4:5:6:7:-8,,");
  CHECK(b.ranks(c) == 8 && b.scalars["C"] == 1024 && b.dtype == DType::BF16 &&
        b.redop == RedOp::Max && b.tables["cnt"].size() == 8 &&
        b.tables["cnt"][7] == -8);
  const char *bad[] = {"R", "Q=1", "R=x", "R=", "T=f33", "op=copy", "op=add",
                       "cnt=1:x", "C=99999999999999999999", "R=1-"};
  for (const char *s : bad) {
    Binding x;
    std::string err;
    CHECK_MSG(!parseBindingList(c, s, x, err) && !err.empty(), s);
  }
  Binding e;
  std::string err;
  CHECK(parseBindingList(c, "", e, err) && e.scalars.empty());
  CHECK_EQ(e.ranks(c), (int64_t)0);
}

// sampleBindings: small values of the unbound parameters; values bound at
// compile time kept, and the sample tables sized under them (a bound R of 4
// needs 4 x 4 tables, whatever R the sample starts from).
void testSampleBindings() {
  Collective a2av = desc(kA2AV);
  auto samples = sampleBindings(a2av);
  CHECK(samples.size() >= 4);
  for (auto &b : samples) {
    int64_t R = b.ranks(a2av);
    CHECK_EQ((int64_t)b.tables["cnt"].size(), R * R);
  }
  std::string bound = kA2AV;
  bound.replace(bound.find("param R ranks"), 13, "param R ranks = 4");
  Collective c4 = desc(bound);
  samples = sampleBindings(c4);
  CHECK(!samples.empty());
  for (auto &b : samples) {
    purlin_test::Context ctx("bound R = 4");
    CHECK_EQ(b.ranks(c4), (int64_t)4);
    CHECK_EQ(b.tables["cnt"].size(), (size_t)16);
    std::vector<Diag> diags;
    bool ok = checkBinding(c4, b, diags);
    CHECK_MSG(ok, diags.empty() ? "" : diags[0].message);
    for (int64_t v : b.tables["cnt"])
      CHECK(v >= 0 && v <= b.scalars["M"]);
  }
  // A bound R with an unbound root: roots stay inside [0, R).
  Collective g = desc(R"(purlin-desc 1
collective g
param R ranks = 2
param C count
param root root
buffer in x i8 [C]
buffer out y i8 [R*C]
clause copy
  dim r [R]
  dim i [C]
  from x @ [r] [i]
  to y @ [root] [r*C + i]
end
)");
  bool sawLast = false;
  for (auto &b : sampleBindings(g)) {
    std::vector<Diag> diags;
    bool ok = checkBinding(g, b, diags);
    CHECK_MSG(ok, diags.empty() ? "" : diags[0].message);
    sawLast |= b.scalars["root"] == 1;
  }
  CHECK(sawLast);
  // A bound table and bound counts are kept as bound.
  std::string tb = kA2AV;
  tb.replace(tb.find("param R ranks"), 13, "param R ranks = 2");
  tb.replace(tb.find("param M count"), 13, "param M count = 3");
  tb.replace(tb.find("max [M]"), 7, "max [M] = 3:0:1:2");
  Collective ct = desc(tb);
  for (auto &b : sampleBindings(ct)) {
    CHECK((b.tables["cnt"] == std::vector<int64_t>{3, 0, 1, 2}));
    CHECK_EQ(b.scalars["M"], (int64_t)3);
  }
  // Unbound: R in {1, 2, 3, 5}, counts in [1, 4], roots at both ends.
  Collective free = desc(R"(purlin-desc 1
collective f
param R ranks
param C count
param root root
buffer in x i8 [C]
buffer out y i8 [C]
clause copy
  dim i [C]
  from x @ [root] [i]
  to y @ [*] [i]
end
)");
  std::set<int64_t> Rs;
  for (auto &b : sampleBindings(free)) {
    Rs.insert(b.ranks(free));
    CHECK(b.scalars["C"] >= 1 && b.scalars["C"] <= 4);
    CHECK(b.scalars["root"] == 0 || b.scalars["root"] == b.ranks(free) - 1);
  }
  CHECK((Rs == std::set<int64_t>{1, 2, 3, 5}));
}

// BoundCollective visits names in row-major order of their dims, extents
// that use earlier coordinates included.
void testVisit() {
  Collective c = desc(kA2AV);
  Binding b = bindList(c, "R=2,M=3,T=i8,cnt=0:2:1:3");
  BoundCollective bc;
  std::string err;
  CHECK_MSG(bc.init(c, b, err), err);
  std::vector<std::string> seen;
  CHECK(bc.visit(0, [&](const int64_t *s) {
    const int64_t *x = s + bc.dimSlot0;
    seen.push_back(std::to_string(x[0]) + std::to_string(x[1]) + std::to_string(x[2]));
    return true;
  }, err));
  CHECK((seen == std::vector<std::string>{"010", "011", "100", "110", "111", "112"}));
  CHECK(bc.R == 2 && bc.bufElems == std::vector<int64_t>({6, 6}));
  int n = 0;
  CHECK(!bc.visit(0, [&](const int64_t *) { return ++n < 2; }, err) && n == 2);
  BoundCollective bad;
  CHECK(!bad.init(c, bindList(c, "R=2,M=3,cnt=0:2:1"), err) &&
        contains(err, "needs 4 values"));
}
} // namespace

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    std::ifstream f(argv[i]);
    std::stringstream ss;
    ss << f.rdbuf();
    CHECK_MSG(f.good() || f.eof(), std::string("cannot read ") + argv[i]);
    CHECK_MSG(!ss.str().empty(), std::string("empty: ") + argv[i]);
    roundTrip(ss.str(), argv[i]);
  }
  testBuiltDescs();
  testBadDescs();
  testStructure();
  testCheckBinding();
  testBindingList();
  testSampleBindings();
  testVisit();
  return purlin_test::finish();
}
