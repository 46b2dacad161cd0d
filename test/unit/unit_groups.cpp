// The executor's group enumeration (spec/include/purlin/spec/exec/Groups.h),
// property style: for clauses of the issue-13 forms written as purlinc
// writes them (a sub-group's sets, a shift's map, every other rank, the
// hierarchical all-reduce's reduce-scatter), every rank count 1..8 and every
// group size, the peers, flows, boxes and staging parts the executor
// computes equal those counted name by name. And splitRange's pieces.
#include "check.h"

#include "purlin/spec/Exec.h"

#include <functional>
#include <string>
#include <vector>

using namespace purlin::exec;

namespace {
// Params: s[0] = R, s[1] = G, s[2] = C.
int64_t fdiv(int64_t a, int64_t b) { return purlin_floordiv(a, b); }

// name (g, i) in [R/G, C]: x@{g*G + j | j in [G]}[i] -> y@{g*G + j | j in [G]}[i]
struct GroupAllReduce {
  static constexpr int kIndex = 0, kDims = 2;
  static constexpr int kFromRole = kSet, kFromDim = -1, kToRole = kSet, kToDim = -1;
  static constexpr int kFromBuf = 0, kToBuf = 1, kOp = kSum;
  static constexpr bool kGeneral = true;
  static constexpr unsigned kRankDims = 0x1u;
  static int64_t fromFixed(const Params &) { return 0; }
  static int64_t toFixed(const Params &) { return 0; }
  static int64_t extent(int d, const int64_t *, const Params &P) {
    return d == 0 ? fdiv(P.s[0], P.s[1]) : P.s[2];
  }
  static int64_t fromIndex(const int64_t *c, const Params &) { return c[1]; }
  static int64_t toIndex(const int64_t *c, const Params &) { return c[1]; }
  static int64_t fromRank(const int64_t *c, int64_t v, const Params &P) { return c[0] * P.s[1] + v; }
  static int64_t fromCount(const int64_t *, const Params &P) { return P.s[1]; }
  static int64_t toRank(const int64_t *c, int64_t v, const Params &P) { return c[0] * P.s[1] + v; }
  static int64_t toCount(const int64_t *, const Params &P) { return P.s[1]; }
};

// name (r, i) in [R, C]: x@r[i] -> y@((r + 1) % R)[i]
struct Shift : GroupAllReduce {
  static constexpr int kFromRole = kCoord, kFromDim = 0, kToRole = kMap, kToDim = -1;
  static int64_t extent(int d, const int64_t *, const Params &P) {
    return d == 0 ? P.s[0] : P.s[2];
  }
  static int64_t fromRank(const int64_t *c, int64_t, const Params &) { return c[0]; }
  static int64_t fromCount(const int64_t *, const Params &) { return 1; }
  static int64_t toRank(const int64_t *c, int64_t, const Params &P) {
    return purlin_floormod(c[0] + 1, P.s[0]);
  }
  static int64_t toCount(const int64_t *, const Params &) { return 1; }
};

// name i in [C]: x@{2*e | e in [(R + 1)/2]}[i] -> y@{2*e | e in [(R + 1)/2]}[i]
struct Evens : GroupAllReduce {
  static constexpr int kDims = 1;
  static constexpr unsigned kRankDims = 0;
  static int64_t extent(int, const int64_t *, const Params &P) { return P.s[2]; }
  static int64_t fromIndex(const int64_t *c, const Params &) { return c[0]; }
  static int64_t toIndex(const int64_t *c, const Params &) { return c[0]; }
  static int64_t fromRank(const int64_t *, int64_t v, const Params &) { return 2 * v; }
  static int64_t fromCount(const int64_t *, const Params &P) { return fdiv(P.s[0] + 1, 2); }
  static int64_t toRank(const int64_t *, int64_t v, const Params &) { return 2 * v; }
  static int64_t toCount(const int64_t *, const Params &P) { return fdiv(P.s[0] + 1, 2); }
};

// name (g, j, i) in [R/G, G, C]:
//   x@{g*G + k | k in [G]}[j*C + i] -> y@(g*G + j)[j*C + i]
struct ReduceScatterInGroups : GroupAllReduce {
  static constexpr int kDims = 3, kToRole = kMap;
  static constexpr unsigned kRankDims = 0x3u;
  static int64_t extent(int d, const int64_t *, const Params &P) {
    return d == 0 ? fdiv(P.s[0], P.s[1]) : d == 1 ? P.s[1] : P.s[2];
  }
  static int64_t fromIndex(const int64_t *c, const Params &P) { return c[1] * P.s[2] + c[2]; }
  static int64_t toIndex(const int64_t *c, const Params &P) { return c[1] * P.s[2] + c[2]; }
  static int64_t toRank(const int64_t *c, int64_t, const Params &P) { return c[0] * P.s[1] + c[1]; }
  static int64_t toCount(const int64_t *, const Params &) { return 1; }
};

// Every name of C by brute force: (contributors, destinations) per name.
template <class C>
void names(const Params &P, int R, std::vector<std::pair<RankMask, RankMask>> &out) {
  out.clear();
  int64_t c[kMaxDims] = {0};
  auto side = [&](bool from) {
    RankMask m = 0;
    const int role = from ? C::kFromRole : C::kToRole;
    const int64_t n = role == kSet ? (from ? C::fromCount(c, P) : C::toCount(c, P)) : 1;
    for (int64_t v = 0; v < n; ++v) {
      const int64_t x = role == kCoord ? c[from ? C::kFromDim : C::kToDim]
                        : from         ? C::fromRank(c, v, P)
                                       : C::toRank(c, v, P);
      if (x >= 0 && x < R)
        m |= 1u << x;
    }
    return m;
  };
  std::function<void(int)> rec = [&](int d) {
    if (d == C::kDims) {
      out.push_back({side(true), side(false)});
      return;
    }
    for (c[d] = 0; c[d] < C::extent(d, c, P); ++c[d])
      rec(d + 1);
    c[d] = 0;
  };
  rec(0);
}

template <class C> void laws(const char *what) {
  for (int R = 1; R <= 8; ++R)
    for (int64_t G = 1; G <= R; ++G) {
      if (R % G)
        continue;
      purlin_test::Context ctx(std::string(what) + " R=" + std::to_string(R) +
                               " G=" + std::to_string(G));
      Params P{};
      P.s[0] = R;
      P.s[1] = G;
      P.s[2] = 3;
      std::vector<std::pair<RankMask, RankMask>> ns;
      names<C>(P, R, ns);
      for (int r = 0; r < R; ++r) {
        RankMask srcs = 0, dsts = 0, mates = 0;
        for (auto &n : ns) {
          if ((n.second >> r) & 1)
            srcs |= n.first;
          if ((n.first >> r) & 1)
            dsts |= n.second;
          const RankMask M = n.first | n.second | ownersOf<C>(n.first, n.second, R);
          if ((M >> r) & 1)
            mates |= M;
        }
        CHECK_EQ(groupPeers<C>(P, kPeersSrcs, r, R), srcs);
        CHECK_EQ(groupPeers<C>(P, kPeersDsts, r, R), dsts);
        CHECK_EQ(groupPeers<C>(P, kPeersGroup, r, R), mates);
        CHECK_EQ(groupPeers<C>(P, kPeersSelf, r, R), 1u << r);
        CHECK_EQ(contributes<C>(P, r), dsts != 0);
        for (int q = 0; q < R; ++q) {
          int64_t n = 0;
          for (auto &x : ns)
            n += ((x.first >> r) & 1) && ((x.second >> q) & 1);
          CHECK_EQ(groupFlows<C>(P, r, q, R), n > 0);
          CHECK_EQ(flows<C>(P, r, q), n > 0);
          CHECK_EQ(slotPart<C>(P, r, q, 1), n); // one group per pair here
        }
      }
      // Every group's box holds its names; the groups hold them all.
      Groups g;
      groups<C>(P, -1, -1, g);
      int64_t total = 0, c[kMaxDims];
      for (int64_t i = 0; i < g.count; ++i) {
        groupAt(g, i, c);
        CHECK_EQ(groupIndex<C>(P, c), i);
        Box b;
        groupBox<C>(P, c, b);
        total += b.n;
      }
      CHECK_EQ(total, (int64_t)ns.size());
    }
}
} // namespace

// splitRange (exec/State.h): its shift path (parts and granule powers of
// two) and its division paths cut every range as the plain formula does,
// and the pieces tile [0, n).
void splitRanges() {
  int bad = 0;
  for (int64_t n : {0, 1, 2, 3, 7, 8, 63, 64, 65, 1000, 4099, 65536, 1 << 20})
    for (int64_t parts : {1, 2, 3, 4, 5, 8, 12, 16, 32, 64})
      for (int64_t g : {1, 2, 3, 4, 8, 16}) {
        int64_t prev = 0;
        for (int64_t i = 0; i < parts; ++i) {
          int64_t a, b;
          splitRange(n, parts, i, g, a, b);
          int64_t wa = (n * i / parts) / g * g;
          int64_t wb = i + 1 == parts ? n : (n * (i + 1) / parts) / g * g;
          wa = wa > n ? n : wa;
          wb = wb < wa ? wa : wb;
          bad += a != wa || b != wb || a != prev;
          prev = b;
        }
        bad += prev != n;
      }
  CHECK_EQ(bad, 0);
}

int main() {
  splitRanges();
  laws<GroupAllReduce>("sub-group all-reduce");
  laws<Shift>("shift");
  laws<Evens>("every other rank");
  laws<ReduceScatterInGroups>("reduce-scatter in groups");
  // Ranks outside every set have no peers: they neither wait nor are
  // waited on.
  Params P{};
  P.s[0] = 5;
  P.s[2] = 3;
  for (int r = 1; r < 5; r += 2) {
    CHECK_EQ(groupPeers<Evens>(P, kPeersGroup, r, 5), 0u);
    CHECK_EQ(groupPeers<Evens>(P, kPeersSrcs, r, 5), 0u);
    CHECK_EQ(groupPeers<Evens>(P, kPeersDsts, r, 5), 0u);
  }
  // Staging parts start on whole vectors (16 bytes: 4 f32).
  CHECK_EQ(roundUnit(3, 4), 4);
  CHECK_EQ(roundUnit(8, 4), 8);
  return purlin_test::finish();
}
