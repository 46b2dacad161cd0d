// purlin-host-run: runs the generated collectives linked into it (a
// registry.cpp from `purlinc --target=host`) on the host target over
// ranks, counts, element types, ops, roots and in-place, checking every
// result against the reference evaluator, and prints a table. A value the
// source binds (a concrete element type, a parameter bound at compile time,
// a clause's fixed op) is run as bound, whatever the options say.
#include "purlin/host/HostRunner.h"
#include "purlin/runtime/BoundValues.h"
#include "purlin/runtime/Launch.h"
#include "purlin/spec/Hash.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <sstream>

extern "C" const purlin_collective_info *(*const purlin_registry[])(void);
extern "C" const int purlin_registry_size;

using namespace purlin;

namespace {
std::vector<std::string> split(const std::string &s, char sep = ',') {
  std::vector<std::string> v;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, sep))
    if (!x.empty())
      v.push_back(x);
  return v;
}

const char *kUsage =
    "usage: purlin-host-run [options]\n"
    "Runs every linked collective on host threads and checks each result\n"
    "bit for bit against the reference evaluator.\n"
    "  --collective NAMES   comma-separated names (default: all linked)\n"
    "  --ranks LIST         rank counts (default 1,2,3,4,5,8); a group size\n"
    "                       parameter takes the divisors of R by turns\n"
    "  --counts LIST        element counts, bound to the first count\n"
    "                       parameter (others get 1 + C % 3, or --params;\n"
    "                       default 0,1,7,1031)\n"
    "  --params N=V,...     fixed values of other count or root parameters\n"
    "                       (e.g. COLS=5), where a collective has them\n"
    "  --dtypes LIST|all    element types (default all; copy-only collectives\n"
    "                       then run one type of each width; a collective of\n"
    "                       a concrete or bound type runs that type)\n"
    "  --ops LIST|all       reduction ops (default all; an op bound at "
    "compile\n"
    "                       time or fixed in the source runs as it is)\n"
    "  --inplace LIST|both|all  no, yes (NCCL's offsets), same (each output "
    "at\n"
    "                       its input's address); both: no,yes; all (default)\n"
    "  --alias IN,OUT       in place: input IN and output OUT share an arena\n"
    "                       (default: the first input and the first output)\n"
    "  --strategy S|auto|all  plan to run (default all: every plan)\n"
    "  --launches N         back-to-back launches per case (default 2)\n"
    "  --launch-counts LIST the successive launches of one case run these\n"
    "                       counts (e.g. 263,1,40000,7,263), one launch each,\n"
    "                       in place of --counts and --launches; repeat it\n"
    "                       for more sequences. One plan runs them all, on one\n"
    "                       scratch area (poisoned once) and one signal array\n"
    "                       laid out at the sequence's maximum binding, as the\n"
    "                       CUDA runtime lays them out for its maxParams (its\n"
    "                       parity stride for every launch); name the plan\n"
    "                       with --strategy (auto: the chooser must pick the\n"
    "                       same plan for every count, else the case fails)\n"
    "  --parity-stride max|call  with --launch-counts: the maximum binding's\n"
    "                       (default), or each launch's own layout end (a\n"
    "                       negative check: halves of other sizes overlap)\n"
    "  --areas call|max     with --launch-counts: each launch's areas at their\n"
    "                       places at the maximum binding (the default where\n"
    "                       launches are several, as purlinLaunch), or where\n"
    "                       its own sizes put them (a negative check: calls\n"
    "                       of other sizes then race on several clauses)\n"
    "  --rank-streams       each rank runs its launches one after the other,\n"
    "                       the ranks unordered, as GPUs' streams run them\n"
    "                       (rank r's launch e + 1 may run while a peer is in\n"
    "                       launch e); default: every launch ends on every\n"
    "                       rank before the next starts. Not with --one-launch\n"
    "  --timeout-ms N       bound of every wait (default 20000)\n"
    "  --seed N             jitter seed, 0 for none (default 1)\n"
    "  --one-launch         every rank in one launch: boundary syncs skipped\n"
    "                       (as on one GPU); default: each kept\n"
    "  --apply-in-launch    with --one-launch: an unfused plan's epilogue in\n"
    "                       the plan's launch (as the SM datapath runs kernels\n"
    "                       compiled at first use), not a launch of its own\n"
    "  --sample N           run a deterministic 1-in-N sample of the grid's\n"
    "                       cases (by a hash of each case; the first case\n"
    "                       always runs); default 1 (every case), or\n"
    "                       PURLIN_HOST_SAMPLE. Not with --table or the\n"
    "                       negative checks (--parity-stride call, --areas\n"
    "                       call), which run every case\n"
    "  --table              print one line per case: collective, strategy,\n"
    "                       ranks, root, bytes per rank (the largest\n"
    "                       buffer; of the largest launch with\n"
    "                       --launch-counts), type, op, result\n";
} // namespace

namespace {
struct Grid {
  std::vector<std::string> names, ranks = {"1", "2", "3", "4", "5", "8"},
                                  counts = {"0", "1", "7", "1031"}, dtypes, ops,
                                  inplace = {"no", "yes", "same"};
  std::map<std::string, int64_t> params; // --params
  std::string strategy = "all";
  std::string aliasIn, aliasOut; // --alias
  int launches = 2;
  // --launch-counts: sequences of counts, one launch each (empty: --counts)
  std::vector<std::vector<int64_t>> sequences;
  bool countsGiven = false, launchesGiven = false, strideOfCall = false;
  int areasAtMaxima = -1;
  int sample = 0; // --sample (0: PURLIN_HOST_SAMPLE, else 1)
  bool rankStreams = false;
  int64_t timeoutMs = 20000;
  bool dtypesGiven = false;
  uint64_t seed = 1;
  bool table = false, oneLaunch = false, applyInLaunch = false;
};

/// -1 when the options are good, else the exit status.
int parseGrid(int argc, char **argv, Grid &g) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "error: %s needs a value\n%s", a.c_str(), kUsage);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--collective")
      g.names = split(next());
    else if (a == "--ranks")
      g.ranks = split(next());
    else if (a == "--counts") {
      g.counts = split(next());
      g.countsGiven = true;
    } else if (a == "--launch-counts") {
      std::vector<int64_t> seq;
      for (const std::string &v : split(next())) {
        if (v.find_first_not_of("0123456789") != std::string::npos) {
          std::fprintf(stderr,
                       "error: --launch-counts takes counts N,N,..., got "
                       "'%s'\n%s",
                       v.c_str(), kUsage);
          return 2;
        }
        seq.push_back(std::atoll(v.c_str()));
      }
      if (seq.empty()) {
        std::fprintf(stderr, "error: --launch-counts needs counts\n%s", kUsage);
        return 2;
      }
      g.sequences.push_back(seq);
    } else if (a == "--parity-stride") {
      std::string v = next();
      if (v != "max" && v != "call") {
        std::fprintf(stderr,
                     "error: --parity-stride takes max or call, got '%s'\n%s",
                     v.c_str(), kUsage);
        return 2;
      }
      g.strideOfCall = v == "call";
    } else if (a == "--areas") {
      std::string v = next();
      if (v != "max" && v != "call") {
        std::fprintf(stderr, "error: --areas takes call or max, got '%s'\n%s",
                     v.c_str(), kUsage);
        return 2;
      }
      g.areasAtMaxima = v == "max" ? 1 : 0;
    } else if (a == "--rank-streams")
      g.rankStreams = true;
    else if (a == "--timeout-ms")
      g.timeoutMs = std::atoll(next().c_str());
    else if (a == "--params") {
      for (const std::string &kv : split(next())) {
        std::vector<std::string> p = split(kv, '=');
        if (p.size() != 2 || p[1].empty() ||
            p[1].find_first_not_of("0123456789") != std::string::npos) {
          std::fprintf(stderr,
                       "error: --params takes NAME=VALUE,... (a count, "
                       "root or group size), got '%s'\n%s",
                       kv.c_str(), kUsage);
          return 2;
        }
        g.params[p[0]] = std::atoll(p[1].c_str());
      }
    } else if (a == "--dtypes") {
      std::string v = next();
      if (v != "all") {
        g.dtypes = split(v);
        g.dtypesGiven = true;
      }
    } else if (a == "--ops") {
      std::string v = next();
      if (v != "all")
        g.ops = split(v);
    } else if (a == "--inplace") {
      std::string v = next();
      g.inplace = v == "both"  ? std::vector<std::string>{"no", "yes"}
                  : v == "all" ? std::vector<std::string>{"no", "yes", "same"}
                               : split(v);
      for (auto &x : g.inplace)
        if (x != "no" && x != "yes" && x != "same") {
          std::fprintf(
              stderr,
              "error: --inplace takes no, yes, same, both or all, got '%s'\n%s",
              x.c_str(), kUsage);
          return 2;
        }
    } else if (a == "--alias") {
      const std::vector<std::string> v = split(next());
      if (v.size() != 2) {
        std::fprintf(stderr, "error: --alias takes IN,OUT\n%s", kUsage);
        return 2;
      }
      g.aliasIn = v[0];
      g.aliasOut = v[1];
    } else if (a == "--strategy")
      g.strategy = next();
    else if (a == "--launches") {
      g.launches = std::atoi(next().c_str());
      g.launchesGiven = true;
    }
    else if (a == "--sample")
      g.sample = std::atoi(next().c_str());
    else if (a == "--seed")
      g.seed = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "--table")
      g.table = true;
    else if (a == "--one-launch")
      g.oneLaunch = true;
    else if (a == "--apply-in-launch")
      g.applyInLaunch = true;
    else if (a == "--help" || a == "-h") {
      std::printf("%s", kUsage);
      return 0;
    } else {
      std::fprintf(stderr, "error: unknown option '%s'\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  auto conflict = [&](const char *what) {
    std::fprintf(stderr, "error: %s\n%s", what, kUsage);
    return 2;
  };
  if (!g.sequences.empty() && (g.countsGiven || g.launchesGiven))
    return conflict("--launch-counts replaces --counts and --launches");
  if (g.strideOfCall && g.sequences.empty())
    return conflict("--parity-stride goes with --launch-counts");
  if (g.rankStreams && g.oneLaunch)
    return conflict("--rank-streams runs several launches; --one-launch one");
  if (g.applyInLaunch && !g.oneLaunch)
    return conflict("--apply-in-launch goes with --one-launch");
  if (g.dtypes.empty())
    for (int t = 0; t < kNumDTypes; ++t)
      g.dtypes.push_back(dtypeName((DType)t));
  if (g.ops.empty())
    for (int o = 1; o < kNumRedOps; ++o)
      g.ops.push_back(redOpName((RedOp)o));
  return -1;
}

/// What a collective runs with: the grid's values, except those its source
/// binds (a concrete type, values bound at compile time, fixed ops).
struct Axes {
  std::vector<std::string> ranks, types, ops, strategies;
  bool hasRoot = false, hasOpParam = false;
  std::string opText; // the op column when there is no op parameter
};

Axes axesOf(const purlin_collective_info *info, const Collective &c,
            const rt::BoundValues &bv, const Grid &g) {
  Axes x;
  bool reduces = false;
  std::string fixedOps;
  for (auto &cl : c.clauses) {
    reduces |= cl.op != RedOp::Copy || !cl.opParam.empty();
    x.hasOpParam |= !cl.opParam.empty();
    if (cl.opParam.empty() && cl.op != RedOp::Copy &&
        fixedOps.find(redOpName(cl.op)) == std::string::npos)
      fixedOps += std::string(fixedOps.empty() ? "" : "+") + redOpName(cl.op);
  }
  for (auto &p : c.params)
    x.hasRoot |= p.kind == ParamKind::Root && bv.scalar(p.name) < 0;
  x.ranks = bv.ranks() >= 0
                ? std::vector<std::string>{std::to_string(bv.ranks())}
                : g.ranks;
  // A copy collective moves bytes: one type of each width is enough to
  // cover every type; a reduction runs every type and op.
  x.types = g.dtypes;
  if (bv.dtype() >= 0)
    x.types = {dtypeName((DType)bv.dtype())};
  else if (!reduces && !g.dtypesGiven)
    x.types = {"i8", "f16", "f32", "f64"};
  bool hasType = false;
  for (auto &p : c.params)
    hasType |= p.kind == ParamKind::Type;
  if (!hasType && bv.dtype() < 0)
    x.types = {x.types.front()};
  if (!x.hasOpParam)
    x.ops = {"sum"};
  else if (bv.op() >= 0)
    x.ops = {redOpName((RedOp)bv.op())};
  else
    x.ops = g.ops;
  x.opText = fixedOps.empty() ? "-" : fixedOps;
  if (g.strategy == "all") {
    for (int p = 0; p < info->nplans; ++p)
      if (std::find(x.strategies.begin(), x.strategies.end(),
                    info->plans[p].strategy) == x.strategies.end())
        x.strategies.push_back(info->plans[p].strategy);
  } else
    x.strategies.push_back(g.strategy == "auto" ? "" : g.strategy);
  return x;
}

/// The binding of one case: R, the first free count C (further free counts
/// small values, so that sizes stay near C rather than C squared, or their
/// --params value), a free root at either end, random table entries within
/// their bounds; then the values the source binds.
Binding bindCase(const Collective &c, const Grid &g, int64_t R, int64_t C,
                 int rootEnd, DType t, RedOp op, size_t turn) {
  Binding b;
  b.dtype = t;
  b.redop = op;
  std::string err;
  applyBoundParams(c, b, err);
  const Param *rp = c.ranksParam();
  if (rp && rp->bound.empty())
    b.scalars[rp->name] = R;
  bool firstCount = true;
  for (auto &p : c.params) {
    if (!p.bound.empty() ||
        (p.kind != ParamKind::Count && p.kind != ParamKind::Root &&
         p.kind != ParamKind::Group))
      continue;
    auto given = g.params.find(p.name);
    if (given != g.params.end())
      b.scalars[p.name] = given->second;
    else if (p.kind == ParamKind::Group) {
      // A group size: the divisors of R by turns over counts and types
      // (every one of them over a few cases).
      const std::vector<int64_t> ds = divisors(std::max<int64_t>(b.ranks(c), 1));
      b.scalars[p.name] = ds[turn % ds.size()];
    } else if (p.kind == ParamKind::Root)
      b.scalars[p.name] = rootEnd ? b.ranks(c) - 1 : 0;
    else {
      b.scalars[p.name] = firstCount || C == 0 ? C : 1 + C % 3;
      firstCount = false;
    }
  }
  std::mt19937_64 rng(b.ranks(c) * 1000 + C);
  for (auto &p : c.params)
    if (p.kind == ParamKind::Table && p.bound.empty()) {
      int64_t n = 1, mx = 0;
      for (auto &d : p.dims) {
        int64_t e = 0;
        evalParamExpr(c, b, d, e, err);
        n *= e;
      }
      evalParamExpr(c, b, p.max, mx, err);
      std::vector<int64_t> v(n > 0 ? n : 0);
      for (auto &x : v)
        x = mx > 0 ? (int64_t)(rng() % (mx + 1)) : 0;
      b.tables[p.name] = v;
    }
  return b;
}

/// A binding as text, to run each distinct case once.
std::string bindingKey(const Binding &b) {
  std::string s =
      std::to_string((int)b.dtype) + "/" + std::to_string((int)b.redop);
  for (auto &kv : b.scalars)
    s += " " + kv.first + "=" + std::to_string(kv.second);
  for (auto &kv : b.tables) {
    s += " " + kv.first + "=";
    for (int64_t v : kv.second)
      s += std::to_string(v) + ":";
  }
  return s;
}

/// " [group G]" for a collective with group size parameters, else "".
std::string groupText(const Collective &c, const Binding &b) {
  std::string s;
  for (auto &p : c.params)
    if (p.kind == ParamKind::Group)
      s += " [" + p.name + " " + std::to_string(b.scalars.at(p.name)) + "]";
  return s;
}

/// The root column: the collective's root parameters' values, "-" for none.
std::string rootText(const Collective &c, const Binding &b) {
  std::string s;
  for (auto &p : c.params)
    if (p.kind == ParamKind::Root)
      s += (s.empty() ? "" : ",") + std::to_string(b.scalars.at(p.name));
  return s.empty() ? "-" : s;
}
} // namespace

int main(int argc, char **argv) {
  Grid g;
  if (int rc = parseGrid(argc, argv, g); rc >= 0)
    return rc;
  int passed = 0, failed = 0;
  // The sample: 1 in `sample` cases, chosen by a hash of the case's key (so
  // the choice does not follow any one axis of the grid), the first case
  // always; every case where the output lists them (--table) or the run
  // expects failures (the negative checks).
  int sample = g.sample;
  if (sample <= 0) {
    const char *e = std::getenv("PURLIN_HOST_SAMPLE");
    sample = e ? std::atoi(e) : 1;
  }
  if (sample < 1 || g.table || g.strideOfCall || g.areasAtMaxima == 0)
    sample = 1;
  int sampledOut = 0;
  auto sampled = [&](const std::string &key) {
    if (sample <= 1 || passed + failed == 0)
      return true;
    // FNV-1a (this seed: the cases sampled since the fortieth session),
    // then a splitmix finish.
    uint64_t h = fnv1a(key, 1469598103934665603ull);
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return h % (uint64_t)sample == 0;
  };
  if (g.table)
    std::printf("%-24s %-14s %5s %4s %10s %-7s %-7s %s\n", "collective",
                "strategy", "ranks", "root", "bytes", "type", "op", "result");
  for (int ci = 0; ci < purlin_registry_size; ++ci) {
    const purlin_collective_info *info = purlin_registry[ci]();
    if (!g.names.empty() &&
        std::find(g.names.begin(), g.names.end(), info->name) == g.names.end())
      continue;
    Collective c;
    rt::BoundValues bv;
    std::string err;
    if (!host::readInfo(info, c, err) || !bv.init(c, err)) {
      std::printf("%s: FAIL: %s\n", info->name, err.c_str());
      ++failed;
      continue;
    }
    const Axes x = axesOf(info, c, bv, g);
    std::set<std::string> seen; // cases a bound value made equal
    // The count axis: --counts, one binding a case; or --launch-counts,
    // a sequence of bindings a case, one a launch.
    const bool seq = !g.sequences.empty();
    const size_t ncounts = seq ? g.sequences.size() : g.counts.size();
    for (auto &rs : x.ranks)
      for (size_t ci = 0; ci < ncounts; ++ci)
        for (int rootEnd = 0; rootEnd < (x.hasRoot ? 2 : 1); ++rootEnd)
          for (size_t ti = 0; ti < x.types.size(); ++ti)
            for (auto &op : x.ops)
              for (auto &ip : g.inplace)
                for (auto &st : x.strategies) {
                  const std::string &t = x.types[ti];
                  const std::vector<int64_t> cs =
                      seq ? g.sequences[ci]
                          : std::vector<int64_t>{std::atoll(g.counts[ci].c_str())};
                  DType dt;
                  RedOp ro;
                  parseDType(t, dt);
                  parseRedOp(op, ro);
                  std::vector<Binding> bs;
                  std::string key, countsText;
                  int64_t bytes = 0; // the largest launch's
                  for (int64_t C : cs) {
                    bs.push_back(bindCase(c, g, std::atoll(rs.c_str()), C,
                                          rootEnd, dt, ro, ci + ti));
                    key += bindingKey(bs.back()) + "|";
                    countsText += (countsText.empty() ? "" : ",") + std::to_string(C);
                    bytes = std::max(bytes, callBytes(c, bs.back()));
                  }
                  const Binding &b = bs.front();
                  const int64_t R = b.ranks(c);
                  key += ip + "|" + st;
                  if (!seen.insert(key).second)
                    continue;
                  if (!sampled(std::string(info->name) + "|" + key)) {
                    ++sampledOut;
                    continue;
                  }
                  host::RunOptions o;
                  o.strategy = st;
                  o.inplace = ip != "no";
                  o.sameStart = ip == "same";
                  o.aliasIn = g.aliasIn;
                  o.aliasOut = g.aliasOut;
                  o.launches = g.launches;
                  o.oneLaunch = g.oneLaunch;
                  o.applyInLaunch = g.applyInLaunch;
                  o.jitterSeed = g.seed ? g.seed + passed + failed : 0;
                  o.rankStreams = g.rankStreams;
                  o.timeoutMs = g.timeoutMs;
                  o.strideOfCall = g.strideOfCall;
                  o.areasAtMaxima = g.areasAtMaxima;
                  host::RunResult res = seq ? host::runLaunches(info, bs, o)
                                            : host::runAndCheck(info, b, o);
                  const std::string seqText =
                      seq ? " [counts " + countsText + "]" : "";
                  const char *opCol =
                      x.hasOpParam ? op.c_str() : x.opText.c_str();
                  if (!res.ok && res.refused) {
                    // Refused, as the runtime refuses it (no plan proved
                    // right in place; tables beyond the executor's
                    // capacity): shown with --table, not a failure.
                    if (g.table)
                      std::printf("%-24s %-14s %5lld %4s %10lld %-7s %-7s "
                                  "refused: %s\n",
                                  info->name, st.empty() ? "auto" : st.c_str(),
                                  (long long)R, rootText(c, b).c_str(),
                                  (long long)bytes, t.c_str(), opCol,
                                  (res.error + seqText).c_str());
                    continue;
                  }
                  res.ok ? ++passed : ++failed;
                  if (g.table || !res.ok)
                    std::printf(
                        "%-24s %-14s %5lld %4s %10lld %-7s %-7s %s%s%s\n",
                        info->name, res.plan.c_str(), (long long)R,
                        rootText(c, b).c_str(), (long long)bytes,
                        t.c_str(), opCol,
                        res.ok ? "ok" : "FAIL: ", res.error.c_str(),
                        (std::string(o.sameStart ? " [in place, same address"
                                     : o.inplace ? " [in place"
                                                 : "") +
                         (o.inplace && !o.aliasIn.empty()
                              ? ", " + o.aliasOut + " at " + o.aliasIn : "") +
                         (o.inplace ? "]" : "") +
                         groupText(c, b) + seqText)
                            .c_str());
                }
  }
  if (sampledOut)
    std::printf("sampled 1 in %d: %d cases not run\n", sample, sampledOut);
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
