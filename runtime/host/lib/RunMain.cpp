// purlin-host-run: runs the generated collectives linked into it (a
// registry.cpp from `purlinc --target=host`) on the host target over
// ranks, counts, element types, ops, roots and in-place, checking every
// result against the reference evaluator, and prints a table.
#include "purlin/host/HostRunner.h"
#include "purlin/runtime/Launch.h"

#include <cstdio>
#include <algorithm>
#include <cstring>
#include <random>
#include <sstream>

extern "C" const purlin_collective_info *(*const purlin_registry[])(void);
extern "C" const int purlin_registry_size;

using namespace purlin;

namespace {
std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, ','))
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
    "                       parameter (others get 1 + C % 3; default 0,1,7,1031)\n"
    "  --dtypes LIST|all    element types (default all; copy-only collectives\n"
    "                       then run one type of each width)\n"
    "  --ops LIST|all       reduction ops (default all)\n"
    "  --inplace LIST|both|all  no, yes (NCCL's offsets), same (each output at\n"
    "                       its input's address); both: no,yes; all (default)\n"
    "  --strategy S|auto|all  plan to run (default all: every plan)\n"
    "  --launches N         back-to-back launches per case (default 2)\n"
    "  --seed N             jitter seed, 0 for none (default 1)\n"
    "  --one-launch         every rank in one launch: boundary syncs skipped\n"
    "                       (as on one GPU); default: each kept\n"
    "  --table              print one line per case\n";
} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> names, ranks = {"1", "2", "3", "4", "5", "8"},
                                  counts = {"0", "1", "7", "1031"}, dtypes, ops,
                                  inplace = {"no", "yes", "same"};
  std::string strategy = "all";
  int launches = 2;
  bool dtypesGiven = false;
  uint64_t seed = 1;
  bool table = false, oneLaunch = false;
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
      names = split(next());
    else if (a == "--ranks")
      ranks = split(next());
    else if (a == "--counts")
      counts = split(next());
    else if (a == "--dtypes") {
      std::string v = next();
      if (v != "all") {
        dtypes = split(v);
        dtypesGiven = true;
      }
    } else if (a == "--ops") {
      std::string v = next();
      if (v != "all")
        ops = split(v);
    } else if (a == "--inplace") {
      std::string v = next();
      inplace = v == "both"  ? std::vector<std::string>{"no", "yes"}
                : v == "all" ? std::vector<std::string>{"no", "yes", "same"}
                             : split(v);
      for (auto &x : inplace)
        if (x != "no" && x != "yes" && x != "same") {
          std::fprintf(stderr, "error: --inplace takes no, yes, same, both or all, got '%s'\n%s",
                       x.c_str(), kUsage);
          return 2;
        }
    } else if (a == "--strategy")
      strategy = next();
    else if (a == "--launches")
      launches = std::atoi(next().c_str());
    else if (a == "--seed")
      seed = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "--table")
      table = true;
    else if (a == "--one-launch")
      oneLaunch = true;
    else if (a == "--help" || a == "-h") {
      std::printf("%s", kUsage);
      return 0;
    } else {
      std::fprintf(stderr, "error: unknown option '%s'\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  if (dtypes.empty())
    for (int t = 0; t < kNumDTypes; ++t)
      dtypes.push_back(dtypeName((DType)t));
  if (ops.empty())
    for (int o = 1; o < kNumRedOps; ++o)
      ops.push_back(redOpName((RedOp)o));

  int passed = 0, failed = 0;
  if (table)
    std::printf("%-24s %-14s %5s %10s %-7s %-5s %s\n", "collective", "strategy",
                "ranks", "bytes", "type", "op", "result");
  for (int ci = 0; ci < purlin_registry_size; ++ci) {
    const purlin_collective_info *info = purlin_registry[ci]();
    if (!names.empty() &&
        std::find(names.begin(), names.end(), info->name) == names.end())
      continue;
    Collective c;
    std::string err;
    if (!host::readInfo(info, c, err)) {
      std::printf("%s: FAIL: %s\n", info->name, err.c_str());
      ++failed;
      continue;
    }
    bool reduces = false, hasRoot = false, hasOpParam = false, hasType = false,
         hasGroup = false;
    for (auto &cl : c.clauses) {
      reduces |= cl.op != RedOp::Copy || !cl.opParam.empty();
      hasOpParam |= !cl.opParam.empty();
    }
    for (auto &p : c.params) {
      hasRoot |= p.kind == ParamKind::Root;
      hasType |= p.kind == ParamKind::Type;
      hasGroup |= p.kind == ParamKind::Group;
    }
    std::vector<std::string> strategies;
    if (strategy == "all") {
      for (int p = 0; p < info->nplans; ++p)
        if (std::find(strategies.begin(), strategies.end(), info->plans[p].strategy) ==
            strategies.end())
          strategies.push_back(info->plans[p].strategy);
    } else
      strategies.push_back(strategy == "auto" ? "" : strategy);
    // A copy collective moves bytes: one type of each width is enough to
    // cover every type; a reduction runs every type and op.
    std::vector<std::string> ts = dtypes;
    if (!reduces && !dtypesGiven)
      ts = {"i8", "f16", "f32", "f64"};
    if (!hasType)
      ts = {ts.front()};
    std::vector<std::string> os = hasOpParam ? ops : std::vector<std::string>{"sum"};
    for (auto &rs : ranks)
      for (size_t ci = 0; ci < counts.size(); ++ci)
        for (int rootEnd = 0; rootEnd < (hasRoot ? 2 : 1); ++rootEnd)
          for (size_t ti = 0; ti < ts.size(); ++ti)
            for (auto &op : os)
              for (auto &ip : inplace)
                for (auto &st : strategies) {
                  const std::string &cs = counts[ci], &t = ts[ti];
                  Binding b;
                  int64_t R = std::atoll(rs.c_str()), C = std::atoll(cs.c_str());
                  // A group size: the divisors of R by turns over counts
                  // and types (every one of them over a few cases).
                  const std::vector<int64_t> ds = divisors(R < 1 ? 1 : R);
                  const int64_t group = ds[(ci + ti) % ds.size()];
                  parseDType(t, b.dtype);
                  parseRedOp(op, b.redop);
                  std::mt19937_64 rng(R * 1000 + C);
                  // The first count gets C; further counts (a matrix's
                  // second extent, say) small values, so that sizes stay
                  // near C rather than C squared.
                  bool firstCount = true;
                  for (auto &p : c.params) {
                    if (p.kind == ParamKind::Ranks)
                      b.scalars[p.name] = R;
                    else if (p.kind == ParamKind::Count) {
                      b.scalars[p.name] = firstCount || C == 0 ? C : 1 + C % 3;
                      firstCount = false;
                    }
                    else if (p.kind == ParamKind::Root)
                      b.scalars[p.name] = rootEnd ? R - 1 : 0;
                    else if (p.kind == ParamKind::Group)
                      b.scalars[p.name] = group; // every divisor of R
                  }
                  for (auto &p : c.params)
                    if (p.kind == ParamKind::Table) {
                      int64_t n = 1, mx = 0;
                      for (auto &d : p.dims) {
                        int64_t e = 0;
                        evalParamExpr(c, b, d, e, err);
                        n *= e;
                      }
                      evalParamExpr(c, b, p.max, mx, err);
                      std::vector<int64_t> v(n);
                      for (auto &x : v)
                        x = mx > 0 ? (int64_t)(rng() % (mx + 1)) : 0;
                      b.tables[p.name] = v;
                    }
                  host::RunOptions o;
                  o.strategy = st;
                  o.inplace = ip != "no";
                  o.sameStart = ip == "same";
                  o.launches = launches;
                  o.oneLaunch = oneLaunch;
                  o.jitterSeed = seed ? seed + passed + failed : 0;
                  host::RunResult res = host::runAndCheck(info, b, o);
                  if (!res.ok && res.error.rfind("no plan fits", 0) == 0) {
                    // e.g. no plan is proved right in place: refused, as
                    // the runtime refuses it (shown with --table)
                    if (table)
                      std::printf("%-24s %-14s %5lld %10lld %-7s %-5s refused: %s\n",
                                  info->name, st.empty() ? "auto" : st.c_str(),
                                  (long long)R, (long long)callBytes(c, b), t.c_str(),
                                  hasOpParam ? op.c_str() : "-", res.error.c_str());
                    continue;
                  }
                  res.ok ? ++passed : ++failed;
                  if (table || !res.ok)
                    std::printf("%-24s %-14s %5lld %10lld %-7s %-5s %s%s%s\n", info->name,
                                res.plan.c_str(), (long long)R,
                                (long long)callBytes(c, b), t.c_str(),
                                hasOpParam ? op.c_str() : "-",
                                res.ok ? "ok" : "FAIL: ", res.error.c_str(),
                                (std::string(o.sameStart ? " [in place, same address]"
                                             : o.inplace ? " [in place]"
                                                         : "") +
                                 (hasGroup ? " [group " + std::to_string(group) + "]" : ""))
                                    .c_str());
                }
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
