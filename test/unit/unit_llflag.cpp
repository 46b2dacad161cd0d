// The low-latency protocol's line flags (atom-kernels/common/sm/aux.h
// llFlag, llFlagMismatch): what an LL line carries so that a rank whose
// peer called with other arguments stops with PURLIN_ERR_MISMATCH instead
// of combining the peer's lines (gpu-mp.sh's mismatch case: 4095 against
// 4096 elements fill the same lines). Checked here on the host, the
// functions the SM kernels call: a flag is never 0 (the zeroed scratch), it
// follows the epoch, equal fingerprints give equal flags, other
// fingerprints other flags with the same epoch bits (which a poll reports
// as a mismatch), and stale or unwritten lines are never a mismatch.
#include "check.h"

#include "common/sm/aux.h"

#include <cstdint>
#include <random>

using purlin::sm::llFlag;
using purlin::sm::llFlagMismatch;
using purlin::sm::signalValue;

int main() {
  std::mt19937_64 rng(27);
  // Never 0, over epochs that wrap the 24 bits and any fingerprint.
  const uint64_t epochs[] = {1, 2, 3, 0xffffffull, 0x1000000ull, 0x1000001ull,
                             0xffffffffull, 0x100000000ull, (1ull << 40) - 1};
  const uint32_t fps[] = {0u, 1u, 0x80u, 0xffffffu, 0x123456u, 0xdeadbeefu};
  for (uint64_t e : epochs)
    for (uint32_t fp : fps) {
      const uint32_t f = llFlag(signalValue(e, fp));
      CHECK(f != 0);
      CHECK_EQ(f & 0xffffffu, (uint32_t)(e & 0xffffff));
      CHECK_EQ(f >> 31, 1u);
      // A line of this launch with this flag is there, not a mismatch; an
      // unwritten line (0) or a torn one (flags unlike) is not a mismatch.
      CHECK(!llFlagMismatch(f, f, f));
      CHECK(!llFlagMismatch(0, 0, f));
      CHECK(!llFlagMismatch(f, 0, f));
    }
  // Consecutive epochs (the parity halves) and the launch two before (a
  // stale line of the same half) never match, and are no mismatch.
  for (int i = 0; i < 1000; ++i) {
    const uint64_t e = 3 + rng() % ((1ull << 40) - 3);
    const uint32_t fp = (uint32_t)rng() & 0xffffffu;
    const uint32_t f = llFlag(signalValue(e, fp));
    for (uint64_t d : {1ull, 2ull, 3ull}) {
      const uint32_t old = llFlag(signalValue(e - d, fp));
      CHECK(old != f);
      CHECK(!llFlagMismatch(old, old, f));
    }
  }
  // Other fingerprints, same epoch: other flags, seen as a mismatch; of
  // random pairs about one in 128 fold alike (7 bits).
  int alike = 0, pairs = 0;
  for (int i = 0; i < 20000; ++i) {
    const uint64_t e = 1 + rng() % ((1ull << 40) - 1);
    const uint32_t a = (uint32_t)rng() & 0xffffffu, b = (uint32_t)rng() & 0xffffffu;
    if (a == b)
      continue;
    ++pairs;
    const uint32_t fa = llFlag(signalValue(e, a)), fb = llFlag(signalValue(e, b));
    if (fa == fb) {
      ++alike;
      continue;
    }
    CHECK(llFlagMismatch(fb, fb, fa));
    CHECK(llFlagMismatch(fa, fa, fb));
  }
  CHECK(alike * 128 < pairs * 2); // well under 2 / 128
  // The fingerprints one count apart (a call of 4095 elements against
  // 4096) differ in their low bits: any single-bit change of the 24 bits
  // changes the flag.
  for (int bit = 0; bit < 24; ++bit)
    for (uint64_t e : epochs) {
      const uint32_t fp = 0x5a5a5au;
      CHECK(llFlag(signalValue(e, fp)) != llFlag(signalValue(e, fp ^ (1u << bit))));
    }
  // The single-process calls (fingerprint 0) keep one top byte.
  CHECK_EQ(llFlag(signalValue(7, 0)) >> 24, 0x80u);
  return purlin_test::finish();
}
