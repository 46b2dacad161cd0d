// Unit tests of the runtime core's plan choice (purlin/runtime/Launch.h):
// choosePlan's low-latency band (plans for several launches only), and
// what a call does where the ranks' launches are not ordered
// (unorderedCall over partialParityLaunch): run, go to the plans with
// barriers (a low-latency band plan), or be refused (a parity plan that is
// the collective's only kind). purlinLaunch (runtime/cuda/Launch.cpp)
// acts on both; this checks the decisions without a GPU. And liveLanes:
// the lanes a launch of a one-shot epilogue plan runs.
#include "check.h"

#include "purlin/runtime/Launch.h"

#include <cstring>
#include <vector>

using namespace purlin;

namespace {

// A layout of two clauses staged by launch parity: clause k's slots are
// 16 bytes a name of scalar k (P.s[k] names), the scratch their sum.
int64_t twoClauseLayout(purlin_shared_t *raw) {
  exec::Shared *S = (exec::Shared *)raw;
  S->parityAreas = 2;
  S->parityClauses = 3;
  for (int k = 0; k < exec::kMaxClauses; ++k)
    S->slotBytes[k] = 0;
  S->slotBytes[0] = S->P.s[0] * 16;
  S->slotBytes[1] = S->P.s[1] * 16;
  return (S->slotBytes[0] + S->slotBytes[1]) * S->R;
}
// A layout without parity areas (a plan with barriers).
int64_t plainLayout(purlin_shared_t *raw) {
  exec::Shared *S = (exec::Shared *)raw;
  S->parityAreas = 0;
  S->parityClauses = 0;
  for (int k = 0; k < exec::kMaxClauses; ++k)
    S->slotBytes[k] = 0;
  return 0;
}

purlin_plan_info plan(const char *strategy, int64_t lo, int64_t hi, bool several,
                      int64_t (*layout)(purlin_shared_t *)) {
  purlin_plan_info p;
  std::memset(&p, 0, sizeof p);
  p.strategy = strategy;
  p.lanes = 4;
  p.chunks = 1;
  p.min_bytes = lo;
  p.max_bytes = hi;
  p.several_launches = several ? 1 : 0;
  p.layout = layout;
  p.inplace_max_ranks = 8;
  p.exclusive_scratch = several ? 1 : 0;
  return p;
}

exec::Shared laid(const purlin_plan_info &p, int64_t c0, int64_t c1) {
  exec::Shared S;
  std::memset(&S, 0, sizeof S);
  S.R = 4;
  S.P.s[0] = c0;
  S.P.s[1] = c1;
  p.layout(&S);
  return S;
}

// The default chooser with --ll-bytes=65536: staged_ll below 64 KiB for
// calls in several launches, direct below 256 KiB, two_shot above.
void lowLatencyBand() {
  purlin_plan_info plans[3] = {
      plan("staged_ll", 0, 65536, true, twoClauseLayout),
      plan("direct", 0, 262144, false, plainLayout),
      plan("two_shot", 262144, -1, false, plainLayout)};
  purlin_collective_info info;
  std::memset(&info, 0, sizeof info);
  info.nplans = 3;
  info.plans = plans;
  CHECK_EQ(choosePlan(&info, 8192, InPlace::No, 4, "", true), 0);
  CHECK_EQ(choosePlan(&info, 8192, InPlace::No, 4, "", false), 1);
  CHECK_EQ(choosePlan(&info, 65536, InPlace::No, 4, "", true), 1);
  CHECK_EQ(choosePlan(&info, 1 << 20, InPlace::No, 4, "", true), 2);
  // Without several launches no band pick nor last resort is the
  // low-latency plan: what the fallback of unorderedCall relies on.
  for (int64_t b : {0, 8, 8192, 65535, 65536, 1 << 20})
    CHECK(choosePlan(&info, b, InPlace::No, 4, "", false) != 0);
}

// Clause 1 idle (count 0) while clause 0 moves, at a maximum binding where
// both move: partialParityLaunch flags it; the low-latency band's plan goes
// to the barriers, the only parity plan is refused; calls where both move,
// or neither, run as chosen.
void unorderedCalls() {
  exec::Params maxP;
  std::memset(&maxP, 0, sizeof maxP);
  maxP.s[0] = 4099;
  maxP.s[1] = 263;
  const purlin_plan_info band = plan("staged_ll", 0, 65536, true, twoClauseLayout);
  const purlin_plan_info only = plan("staged_ll", 0, -1, false, twoClauseLayout);
  const purlin_plan_info plain = plan("direct", 0, -1, false, plainLayout);
  {
    const exec::Shared S = laid(band, 1031, 0);
    CHECK(partialParityLaunch(band, maxP, S));
    CHECK(unorderedCall(band, maxP, S) == Unordered::kBarriers);
    CHECK(unorderedCall(only, maxP, laid(only, 1031, 0)) == Unordered::kRefuse);
  }
  CHECK(unorderedCall(band, maxP, laid(band, 1031, 7)) == Unordered::kRun);
  CHECK(unorderedCall(only, maxP, laid(only, 1031, 7)) == Unordered::kRun);
  CHECK(unorderedCall(only, maxP, laid(only, 0, 0)) == Unordered::kRun); // empty: skipped
  CHECK(emptyParityLaunch(laid(only, 0, 0)));
  CHECK(unorderedCall(plain, maxP, laid(plain, 1031, 0)) == Unordered::kRun);
  // Idle here and at the maximum binding too: nothing of that clause is
  // ever staged, so no order is broken.
  exec::Params noSecond = maxP;
  noSecond.s[1] = 0;
  CHECK(unorderedCall(only, noSecond, laid(only, 1031, 0)) == Unordered::kRun);
}

Collective desc(const char *text) {
  Collective c;
  std::string err;
  CHECK_MSG(readDesc(text, c, err), err);
  return c;
}

// all_reduce as purlinc --emit=desc writes it (one count C, type T).
const char *kAllReduce = "purlin-desc 1\ncollective all_reduce\nparam R ranks\n"
                         "param C count\nparam T type\nparam op redop\n"
                         "buffer in x T [C]\nbuffer out y T [C]\nclause op\n"
                         "  dim i [C]\n  from x @ [*] [i]\n  to y @ [*] [i]\nend\n";
// Two counts, one buffer of N*H and one of H.
const char *kRows = "purlin-desc 1\ncollective rows\nparam R ranks\n"
                    "param N count\nparam H count\nparam T type\nparam op redop\n"
                    "buffer in x T [N*H]\nbuffer out y T [N*H]\nclause op\n"
                    "  dim i [N*H]\n  from x @ [*] [i]\n  to y @ [*] [i]\nend\n";

// all_reduce_rmsnorm's description as purlinc --emit=desc writes it (rows
// n of H elements, residual and norm epilogue).
const char *kEpi =
      "purlin-desc 1\ncollective epi\nparam R ranks\nparam N count\nparam H count\n"
      "param T type\nbuffer in x T [N*H]\nbuffer in res T [N*H]\nbuffer in w T [H]\n"
      "buffer in eps T [1]\nbuffer out y T [N*H]\nbuffer out res_out T [N*H]\n"
      "clause sum\n  dim n [N]\n  dim i [H]\n  from x @ [*] [n*H + i]\n"
      "  to y @ [*] [n*H + i]\n  rows n\n  let h [recv + res[n*H + i]]\n"
      "  store res_out [n*H + i] [h]\n  store y [n*H + i] [h/sqrt(rowsum(h*h)/H + eps[0])*w[i]]\n"
      "end\n";

// The band's binding: the largest counts whose 1-byte call stays below the
// band's edge, whatever the instance's maxima (the LL plan's scratch is
// laid out there, not at maxParams).
void bandBindings() {
  const Collective ar = desc(kAllReduce);
  Binding maxB;
  maxB.scalars = {{"R", 8}, {"C", int64_t(1) << 26}};
  maxB.dtype = DType::BF16;
  Binding b;
  CHECK(bandBinding(ar, maxB, 65536, b));
  CHECK_EQ(b.scalars["C"], 65535);
  CHECK_EQ(b.scalars["R"], 8);
  CHECK(b.dtype == DType::BF16);
  // Every in-band call fits: the largest u8 call below 64 KiB has 65535
  // elements, a bf16 one 32767.
  Binding u8 = b;
  u8.dtype = DType::U8;
  CHECK(callBytes(ar, u8) < 65536);
  u8.scalars["C"] = 65536;
  CHECK_EQ(callBytes(ar, u8), 65536);
  // Maxima already inside the band, no band, or a count of 0: kept.
  Binding small = maxB;
  small.scalars["C"] = 1000;
  CHECK(!bandBinding(ar, small, 65536, b));
  CHECK(!bandBinding(ar, maxB, 0, b));
  // Two counts scale together.
  const Collective rows = desc(kRows);
  Binding m2;
  m2.scalars = {{"R", 4}, {"N", 4096}, {"H", 8192}};
  CHECK(bandBinding(rows, m2, 65536, b));
  const int64_t n = b.scalars["N"], h = b.scalars["H"];
  CHECK(n * h < 65536);
  CHECK(n * h > 65536 / 2);
  CHECK(n * 2 >= h - 2 && n * 2 <= h + 2); // the maxima's 1:2 shape
}

// In place: all_reduce's rule (a plan that reads its inputs where they
// are, whatever its band) and an epilogue's (bandFirst: the band's copy
// plan first), over the default plan set of all_reduce_rmsnorm (its fused
// one-shot through 256 KiB out of place; in place below 512 KiB the
// unfused one-shot, right in place without copies; its fused two-shot
// proved right at the same address, as the unfused one, from 256 KiB + 1,
// its band first in the set).
// all_reduce_rmsnorm's default plan set by bytes into plans[6] and info,
// with the in-place proofs purlinc gives it (two_shot_gather last, since
// the forty-second session: right for any overlap, without copies).
void epilogueSet(purlin_plan_info *plans, purlin_collective_info &info) {
  plans[0] = plan("direct", 0, 262145, false, plainLayout);
  plans[1] = plan("two_shot", 262145, 4194304, false, plainLayout);
  plans[2] = plan("two_shot_unfused", 4194304, -1, false, plainLayout);
  plans[3] = plan("direct_unfused", 0, 524288, false, plainLayout);
  plans[4] = plan("two_shot_copy", 524288, -1, false, plainLayout);
  plans[5] = plan("two_shot_gather", 524288, -1, false, plainLayout);
  plans[1].inplace_same = 1; // right in place at the same address
  plans[2].inplace_same = 1;
  plans[3].inplace_safe = plans[3].inplace_same = 1; // no copy
  plans[4].inplace_safe = plans[4].inplace_same = plans[4].copies_inputs = 1;
  plans[5].inplace_safe = plans[5].inplace_same = 1; // no copy
  std::memset(&info, 0, sizeof info);
  info.nplans = 6;
  info.plans = plans;
}

void inPlace() {
  purlin_plan_info plans[6];
  purlin_collective_info info;
  epilogueSet(plans, info);
  const InPlace same = InPlace::SameStart, any = InPlace::Any;
  // A small in-place call: the band's plan that reads the inputs where
  // they are, by either rule.
  CHECK_EQ(choosePlan(&info, 2048, same, 8, "", false, false), 3);
  CHECK_EQ(choosePlan(&info, 2048, same, 8, "", false, true), 3);
  // In the fused two-shot's band at the same address, it (no copy) before
  // two_shot_copy.
  CHECK_EQ(choosePlan(&info, 1 << 20, same, 8, "", false, true), 1);
  CHECK_EQ(choosePlan(&info, 524289, same, 8, "", false, true), 1);
  // Any other overlap from 512 KiB: the gathered two-shot, which copies
  // nothing, before two_shot_copy.
  CHECK_EQ(choosePlan(&info, 1 << 20, any, 8, "", false, true), 5);
  CHECK_EQ(choosePlan(&info, 8 << 20, same, 8, "", false, true), 2);
  CHECK_EQ(choosePlan(&info, 8 << 20, any, 8, "", false, true), 5);
  CHECK_EQ(choosePlan(&info, 2048, any, 8, "", false, true), 3);
  // At 512 KiB in place at the same address the fused two-shot (the
  // unfused one-shot's band ends there; before the twenty-fifth session
  // the two-shot's band began at 512 KiB + 1, so two_shot_copy took it),
  // any other overlap the gathered two-shot (two_shot_copy before the
  // forty-second session). From 256 KiB + 1 to 512 KiB both
  // in-place plans' bands hold a call at the same address: the fused
  // two-shot, first in the set, takes it; through 256 KiB the unfused
  // one-shot. Out of place the fused one-shot through 256 KiB, then the
  // two-shot.
  CHECK_EQ(choosePlan(&info, 524288, same, 8, "", false, true), 1);
  CHECK_EQ(choosePlan(&info, 524288, any, 8, "", false, true), 5);
  CHECK_EQ(choosePlan(&info, 524287, same, 8, "", false, true), 1);
  CHECK_EQ(choosePlan(&info, 524287, any, 8, "", false, true), 3);
  CHECK_EQ(choosePlan(&info, 262145, same, 8, "", false, true), 1);
  CHECK_EQ(choosePlan(&info, 262144, same, 8, "", false, true), 3);
  CHECK_EQ(choosePlan(&info, 262144, InPlace::No, 8, "", false, true), 0);
  CHECK_EQ(choosePlan(&info, 262145, InPlace::No, 8, "", false, true), 1);
  // Out of place, the band's plan either way.
  for (bool bf : {false, true}) {
    CHECK_EQ(choosePlan(&info, 2048, InPlace::No, 8, "", false, bf), 0);
    CHECK_EQ(choosePlan(&info, 1 << 20, InPlace::No, 8, "", false, bf), 1);
    CHECK_EQ(choosePlan(&info, 8 << 20, InPlace::No, 8, "", false, bf), 2);
  }
  // More ranks than the in-place proofs reach: no plan in place.
  CHECK_EQ(choosePlan(&info, 2048, same, 9, "", false, true), -1);
  // Where the one-shot band's in-place plan copies (direct_copy: a
  // collective without the unfused plans), the two rules part: all_reduce's
  // sends a small call to a plan of another band that does not copy (here
  // the fused two-shot), bandFirst to the band's own.
  plans[3] = plan("direct_copy", 0, 524288, false, plainLayout);
  plans[3].inplace_safe = plans[3].inplace_same = plans[3].copies_inputs = 1;
  CHECK_EQ(choosePlan(&info, 2048, same, 8, "", false, false), 1);
  CHECK_EQ(choosePlan(&info, 2048, same, 8, "", false, true), 3);
  CHECK_EQ(choosePlan(&info, 2048, any, 8, "", false, true), 3);
}

// The rows bands (purlinc's default set for all_reduce_rmsnorm since the
// forty-first session: the fused one-shot for 2-16 rows wider than 8192
// elements, the unfused one-shot for one such row, the unfused two-shot
// from 129 rows of 4096 to 8192 elements; since the forty-second the
// gathered two-shot from 2 rows wider than 8192, after the fused
// one-shot's band, so out of place from 17 and in place from 2), and
// epilogueRows, which sizes a call's rows from its description.
void rowsBands() {
  purlin_plan_info plans[6];
  purlin_collective_info info;
  epilogueSet(plans, info);
  auto band = [](purlin_plan_info &p, int64_t lo, int64_t hi, int64_t elo, int64_t ehi) {
    p.min_rows = lo, p.max_rows = hi, p.min_row_elems = elo, p.max_row_elems = ehi;
  };
  band(plans[0], 2, 17, 8193, -1);
  band(plans[2], 129, -1, 4096, 8193);
  band(plans[3], 0, 2, 8193, -1);
  band(plans[5], 2, -1, 8193, -1);
  const InPlace no = InPlace::No, same = InPlace::SameStart, any = InPlace::Any;
  auto pick = [&](int64_t rows, int64_t elems, InPlace ip = InPlace::No, int es = 2) {
    return choosePlan(&info, rows * elems * es, ip, 8, "", false, true, EpiRows{rows, elems});
  };
  // Rows of 4096-8192 elements: the byte bands through 128 rows, the
  // unfused two-shot from 129 (1 MiB at 4096 x 129 bf16, below its byte
  // edge).
  CHECK_EQ(pick(1, 4096), 0);
  CHECK_EQ(pick(32, 4096), 0);
  CHECK_EQ(pick(64, 4096), 1);
  CHECK_EQ(pick(128, 4096), 1);
  CHECK_EQ(pick(129, 4096), 2);
  CHECK_EQ(pick(255, 6144), 2);
  CHECK_EQ(pick(16, 8192), 0);
  CHECK_EQ(pick(128, 8192), 1);
  CHECK_EQ(pick(129, 8192), 2);
  // Narrower rows keep the byte edge (1024 x 256: 512 KiB, fused two-shot),
  // and so do wider ones (12288 x 144: 3.4 MiB).
  CHECK_EQ(pick(256, 1024), 1);
  CHECK_EQ(pick(129, 4095), 1);
  CHECK_EQ(pick(4096, 1024), 2);
  CHECK_EQ(pick(129, 8192, any), 5); // (from 512 KiB, no copy)
  // Wider rows: the unfused one-shot for one row, the fused one through
  // 16 rows, whatever the bytes (f32 16384 x 16: 1 MiB), then the gathered
  // two-shot, whatever the bytes (12288 x 144: 3.4 MiB).
  CHECK_EQ(pick(1, 12288), 3);
  CHECK_EQ(pick(1, 16384), 3);
  CHECK_EQ(pick(2, 12288), 0);
  CHECK_EQ(pick(16, 12288), 0);
  CHECK_EQ(pick(16, 16384), 0);
  CHECK_EQ(pick(16, 16384, no, 4), 0);
  CHECK_EQ(pick(17, 16384), 5);
  CHECK_EQ(pick(64, 12288), 5);
  CHECK_EQ(pick(256, 16384), 5);
  CHECK_EQ(pick(144, 12288), 5);
  CHECK_EQ(pick(129, 8193), 5);
  CHECK_EQ(pick(1, 8193), 3);
  CHECK_EQ(pick(1, 8192), 0);
  // In place: a rows band's plan only where it is proved right for the
  // overlap. The fused one-shot is not; the unfused one-shot is, for any
  // overlap; the unfused two-shot at the same address only.
  // The unfused one-shot keeps the single row; from 2 rows the gathered
  // two-shot, right for any overlap (the fused one-shot's band, first
  // out of place, is not proved right in place).
  CHECK_EQ(pick(2, 12288, same), 5);
  CHECK_EQ(pick(16, 12288, same), 5);
  CHECK_EQ(pick(16, 16384, same), 5);
  CHECK_EQ(pick(17, 16384, same), 5);
  CHECK_EQ(pick(32, 16384, any), 5);
  CHECK_EQ(pick(16, 12288, any), 5);
  CHECK_EQ(pick(1, 12288, any), 3);
  // Rows of 8192 keep the byte bands in place: the fused two-shot from
  // 256 KiB + 1.
  CHECK_EQ(pick(16, 8192, same), 3);
  CHECK_EQ(pick(32, 8192, same), 1);
  CHECK_EQ(pick(17, 12288), 5);
  // max_rows_in_place (a band's own end in place; the default set has
  // none since the forty-second session): reached in place only.
  plans[3].max_rows_in_place = 33;
  CHECK(!inRowsBand(plans[3], EpiRows{16, 12288}));
  CHECK(inRowsBand(plans[3], EpiRows{16, 12288}, InPlace::SameStart));
  CHECK_EQ(pick(16, 12288, same), 3);
  plans[3].max_rows_in_place = 0;
  CHECK_EQ(pick(129, 4096, same), 2);
  CHECK_EQ(pick(129, 4096, any), 5);
  // No epilogue rows (the default EpiRows): the byte bands alone.
  CHECK_EQ(choosePlan(&info, 16 * 12288 * 2, no, 8, "", false, true), 1);
  CHECK_EQ(choosePlan(&info, 129 * 4096 * 2, no, 8, "", false, true), 1);
  // A strategy by name is taken whatever the rows band says.
  CHECK_EQ(choosePlan(&info, 12288 * 2, no, 8, "two_shot", false, true, EpiRows{1, 12288}), 1);
  // max_rows 0 is no band (a table from before the rows bands).
  plans[3].max_rows = 0;
  CHECK_EQ(pick(1, 12288), 0);
  CHECK(!inRowsBand(plans[3], EpiRows{0, 1 << 20}));

  // epilogueRows: rows n by H elements (the row coordinates against the
  // rest), -1 rows without an epilogue.
  const Collective epi = desc(kEpi);
  Binding b;
  b.scalars = {{"R", 8}, {"N", 7}, {"H", 12288}};
  b.dtype = DType::BF16;
  EpiRows r = epilogueRows(epi, b);
  CHECK_EQ(r.rows, 7);
  CHECK_EQ(r.elems, 12288);
  b.scalars["N"] = 0;
  CHECK_EQ(epilogueRows(epi, b).rows, 0);
  CHECK_EQ(epilogueRows(desc(kAllReduce), b).rows, -1);
  Binding partial;
  partial.scalars = {{"R", 8}, {"N", 7}}; // H unbound: no rows
  CHECK_EQ(epilogueRows(epi, partial).rows, -1);
}

// Rows as scalar 0 (a row-lane plan's purlin_plan_info::rows).
int64_t rowsOfScalar0(const purlin_shared_t *raw) {
  return ((const exec::Shared *)raw)->P.s[0];
}

// liveLanes (spec/Params.h): a plan whose lanes share only its epilogue's
// rows runs min(lanes, ceil(rows / chunks)) of them, at least 1; any other
// plan all of its lanes (0). liveLanesOf reads it back for the targets.
void liveLaneCounts() {
  purlin_plan_info p = plan("direct", 0, -1, false, plainLayout);
  p.lanes = 16;
  exec::Shared S = laid(p, 1, 0);
  S.L = 16;
  S.K = 1;
  CHECK_EQ(liveLanes(p, S), 0); // no rows function: every lane
  p.rows = rowsOfScalar0;
  for (auto [rows, want] : {std::pair<int64_t, int>{1, 1}, {7, 7}, {15, 15}, {16, 0},
                            {17, 0}, {4096, 0}, {0, 1}}) {
    S.P.s[0] = rows;
    CHECK_EQ(liveLanes(p, S), want);
    S.liveLanes = liveLanes(p, S);
    CHECK_EQ(exec::liveLanesOf(S), rows >= 16 ? 16 : rows < 1 ? 1 : (int)rows);
  }
  S.K = 2; // rows per chunk
  S.P.s[0] = 7;
  CHECK_EQ(liveLanes(p, S), 4);
  S.L = 1; // one lane: nothing to cut
  CHECK_EQ(liveLanes(p, S), 0);
  S.L = 16;
  S.liveLanes = 0;
  CHECK_EQ(exec::liveLanesOf(S), 16);
}

} // namespace

// classifyOverlap with an epilogue's own pairs (spec/Epilogue.h,
// epilogueLocalPairs): all_reduce_rmsnorm's res_out at res is no overlap;
// with y at x too the call is in place at the same address; res_out over
// res at another offset is any overlap.
void localOverlap() {
  const char *desc = kEpi;
  Collective c;
  std::string err;
  CHECK_MSG(readDesc(desc, c, err), err);
  const uint64_t lp = epilogueLocalPairs(c);
  CHECK_EQ(lp, 1ull << (1 * 8 + 5));
  const int R = 2, H = 4, N = 2, nb = 6;
  std::vector<std::vector<uint16_t>> mem(R * nb, std::vector<uint16_t>(N * H * 2));
  std::vector<void *> bufs(R * nb);
  for (int i = 0; i < R * nb; ++i)
    bufs[i] = mem[i].data();
  const int64_t elems[nb] = {N * H, N * H, H, 1, N * H, N * H};
  const int es[nb] = {2, 2, 2, 2, 2, 2};
  for (int r = 0; r < R; ++r)
    bufs[r * nb + 5] = bufs[r * nb + 1];
  CHECK(classifyOverlap(c, bufs.data(), R, elems, es, lp) == InPlace::No);
  CHECK(classifyOverlap(c, bufs.data(), R, elems, es) == InPlace::SameStart);
  for (int r = 0; r < R; ++r)
    bufs[r * nb + 4] = bufs[r * nb + 0];
  CHECK(classifyOverlap(c, bufs.data(), R, elems, es, lp) == InPlace::SameStart);
  for (int r = 0; r < R; ++r) {
    bufs[r * nb + 4] = mem[r * nb + 4].data();
    bufs[r * nb + 5] = mem[r * nb + 1].data() + 1;
  }
  CHECK(classifyOverlap(c, bufs.data(), R, elems, es, lp) == InPlace::Any);
}

int main() {
  liveLaneCounts();
  lowLatencyBand();
  unorderedCalls();
  bandBindings();
  inPlace();
  rowsBands();
  localOverlap();
  return purlin_test::finish();
}
