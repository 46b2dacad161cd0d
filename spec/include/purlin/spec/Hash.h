// FNV-1a, 64 bits: the one hash of short keys in the runtime and its
// tools (the host runner's sample of a grid, the SM datapath's disk-cache
// names, a multi-process call's fingerprint). Each caller names its own
// starting value: the cache names and the runner's sample must stay what
// they were (a changed seed renames every cached kernel and moves every
// sampled case).
#pragma once

#include <cstdint>
#include <string>

namespace purlin {

constexpr uint64_t kFnv1aPrime = 0x100000001b3ull;

/// `h` and one byte.
inline uint64_t fnv1aByte(uint64_t h, unsigned char c) { return (h ^ c) * kFnv1aPrime; }

/// `h` and the bytes of `s`, in order.
inline uint64_t fnv1a(const std::string &s, uint64_t h) {
  for (unsigned char c : s)
    h = fnv1aByte(h, c);
  return h;
}

/// `h` and the 8 bytes of `v`, least significant first (the same on every
/// host, whatever its byte order).
inline uint64_t fnv1aWord(uint64_t h, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    h = fnv1aByte(h, (unsigned char)((v >> (8 * i)) & 0xff));
  return h;
}

} // namespace purlin
