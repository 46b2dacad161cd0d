// The register row's pieces (exec/Epilogue.h): what an epilogue's
// statements see of one element of a vector the thread holds, the stores
// of a vector held until its last element has run, and the row-uniform
// values' inputs. Part of the executor (purlin/spec/Exec.h).
#pragma once

#include "purlin/spec/exec/GroupSteps.h"

namespace purlin {
namespace exec {

/// Elements a vector of the register row (Tgt::loadF8, Tgt::storeF8).
constexpr int kEpiVec = 8;

/// The stores of one vector's elements in the register row, held back
/// until its last element has run (EpiVecElem): buffer b's stores at
/// at[b] + j for the elements j whose bit is set in held[b]. Stored before
/// the next load, a value would make every later element of the thread
/// wait for its loads in turn (a store may alias them); held, the loads of
/// all kEpiVec elements are issued together and the stores go out as one
/// vector. Buffers and element numbers are constants once the element code
/// is inlined, so this stays in registers. `off`: a store that does not
/// extend its buffer's run from element 0 (an output whose index has no
/// unit step along the row, or two stores to one buffer); nothing is
/// stored then and the vector runs again storing at once (EpiVecElem with
/// kAtOnce), so no store can sit between the loads of the held form.
struct EpiVecOut {
  float v[kMaxBuffers][kEpiVec];
  int64_t at[kMaxBuffers];
  unsigned held[kMaxBuffers];
  bool off;
};

/// Rank r's buffers as an epilogue's statements see them: its inputs
/// widened to f32, its outputs narrowed with one rounding (Tgt::loadF,
/// Tgt::storeF; a buffer of its own type, Shared::bufDType, through
/// Tgt::loadFAs and Tgt::storeFAs). What E::uniform reads, and the base of
/// what E::element sees (EpiElem, EpiVecElem). The *Launch forms are for a
/// buffer that purlinc knows has the launch's element type (it declares
/// none of its own): no test of Shared::bufDType on the way.
template <class Tgt> struct EpiRank {
  Tgt &t;
  const Shared &S;
  int r;
#if defined(PURLIN_EPI_TESTED_TYPES) // a measurement build (Epilogue.h)
  PURLIN_HD float loadLaunch(int buf, int64_t i) const {
    const int d = S.bufDType[buf];
    return d < 0 ? t.loadF((const char *)S.buf[r][buf], i)
                 : t.loadFAs(d, (const char *)S.buf[r][buf], i);
  }
  PURLIN_HD void storeLaunch(int buf, int64_t i, float x) const {
    const int d = S.bufDType[buf];
    if (d < 0)
      t.storeF((char *)S.buf[r][buf], i, x);
    else
      t.storeFAs(d, (char *)S.buf[r][buf], i, x);
  }
#else
  PURLIN_HD float loadLaunch(int buf, int64_t i) const {
    return t.loadF((const char *)S.buf[r][buf], i);
  }
  PURLIN_HD void storeLaunch(int buf, int64_t i, float x) const {
    t.storeF((char *)S.buf[r][buf], i, x);
  }
#endif
  PURLIN_HD float load(int buf, int64_t i) const {
    const int d = S.bufDType[buf];
    return d < 0 ? loadLaunch(buf, i)
                 : t.loadFAs(d, (const char *)S.buf[r][buf], i);
  }
  PURLIN_HD void store(int buf, int64_t i, float x) const {
    const int d = S.bufDType[buf];
    if (d < 0)
      storeLaunch(buf, i, x);
    else
      t.storeFAs(d, (char *)S.buf[r][buf], i, x);
  }
};

/// What the statements see of element J of a vector in the register row:
/// the received value the thread holds; inputs as EpiRank; outputs held in
/// `o`, or stored at once (kAtOnce, as EpiRank). Holding a store past later
/// elements' loads is what any order of the lane's threads may do already:
/// a statement reads inputs, never what another element stores.
template <class Tgt, int J, bool kAtOnce> struct EpiVecElem : EpiRank<Tgt> {
  float v;
  EpiVecOut &o;
  PURLIN_HD float recv() const { return v; }
  PURLIN_HD void store(int buf, int64_t i, float x) const {
    if constexpr (kAtOnce) {
      EpiRank<Tgt>::store(buf, i, x);
    } else if constexpr (J == 0) {
      if (o.held[buf]) { // a second store to this buffer
        o.off = true;
        return;
      }
      o.at[buf] = i; // the run starts here
      o.v[buf][0] = x;
      o.held[buf] = 1u;
    } else {
      if (!(o.held[buf] >> (J - 1) & 1u) || i != o.at[buf] + J) {
        o.off = true;
        return;
      }
      o.v[buf][J] = x;
      o.held[buf] |= 1u << J;
    }
  }
};

namespace detail {
/// Whether the kEpiVec elements from element i of `base` are aligned for
/// Tgt::loadF8 and Tgt::storeF8: on min(16 bytes, the vector's size).
PURLIN_HD bool epiVecAligned(const Shared &S, const char *base, int64_t i) {
  const int64_t vbytes = (int64_t)kEpiVec * S.elemSize;
  const uintptr_t align = (uintptr_t)(vbytes < 16 ? vbytes : 16); // a power of 2
  return ((uintptr_t)(base + i * S.elemSize) & (align - 1)) == 0;
}
} // namespace detail

/// Rank r's buffers as an epilogue's vector form sees them (E::elementVec,
/// the register row): kEpiVec consecutive elements from index i, widened
/// and narrowed as EpiRank does, as one vector access where the vector is
/// aligned for it (Tgt::loadF8, Tgt::storeF8), else element by element (a
/// buffer of its own type always: EpiRank's load and store).
template <class Tgt> struct EpiVecRank : EpiRank<Tgt> {
#if defined(PURLIN_EPI_TESTED_TYPES) // a measurement build (Epilogue.h)
  static constexpr bool kTested = true;
#else
  static constexpr bool kTested = false;
#endif
  /// Whether load8Launch and store8Launch take the vector at element i of
  /// buffer buf (at `base`) as one access: a buffer of the launch's type,
  /// aligned.
  PURLIN_HD bool whole(int buf, const char *base, int64_t i) const {
    return (!kTested || this->S.bufDType[buf] < 0) && detail::epiVecAligned(this->S, base, i);
  }
  /// load8 of a buffer of the launch's type (EpiRank's *Launch forms).
  PURLIN_HD void load8Launch(int buf, int64_t i, float *out) const {
    const char *base = (const char *)this->S.buf[this->r][buf];
    if (whole(buf, base, i)) {
      this->t.loadF8(base, i, out);
      return;
    }
    for (int j = 0; j < kEpiVec; ++j)
      out[j] = this->loadLaunch(buf, i + j);
  }
  PURLIN_HD void load8(int buf, int64_t i, float *out) const {
    if (this->S.bufDType[buf] < 0) {
      load8Launch(buf, i, out);
      return;
    }
    for (int j = 0; j < kEpiVec; ++j)
      out[j] = this->load(buf, i + j);
  }
  /// A hint that load8(buf, i) comes soon (Tgt::prefetchF8).
  PURLIN_HD void prefetch8Launch(int buf, int64_t i) const {
    if (kTested && this->S.bufDType[buf] >= 0)
      return;
    this->t.prefetchF8((const char *)this->S.buf[this->r][buf], i);
  }
  PURLIN_HD void prefetch8(int buf, int64_t i) const {
    if (this->S.bufDType[buf] < 0)
      prefetch8Launch(buf, i);
  }
  PURLIN_HD void store8Launch(int buf, int64_t i, const float *v) const {
    char *base = (char *)this->S.buf[this->r][buf];
    if (whole(buf, base, i)) {
      this->t.storeF8(base, i, v);
      return;
    }
    for (int j = 0; j < kEpiVec; ++j)
      this->storeLaunch(buf, i + j, v[j]);
  }
  PURLIN_HD void store8(int buf, int64_t i, const float *v) const {
    if (this->S.bufDType[buf] < 0) {
      store8Launch(buf, i, v);
      return;
    }
    for (int j = 0; j < kEpiVec; ++j)
      this->store(buf, i + j, v[j]);
  }
};

namespace detail {
/// c's inner coordinates = element `e` of the row (row-major); with one
/// inner coordinate (e < its extent) without a division.
template <class C, class E>
PURLIN_HD void innerAt(int64_t e, const int64_t *ext, int64_t *c) {
  if constexpr (C::kDims - E::kRowDims == 1) {
    c[C::kDims - 1] = e;
  } else {
    for (int d = C::kDims - 1; d >= E::kRowDims; --d) {
      c[d] = e % ext[d];
      e /= ext[d];
    }
  }
}
/// c stepped to the row's next element (row-major, with carry; with one
/// inner coordinate no carry: a vector does not cross its row's end).
template <class C, class E>
PURLIN_HD void nextInner(const int64_t *ext, int64_t *c) {
  if constexpr (C::kDims - E::kRowDims == 1)
    ++c[C::kDims - 1];
  else
    for (int d = C::kDims - 1; d >= E::kRowDims; --d) {
      if (++c[d] < ext[d])
        break;
      c[d] = 0;
    }
}
/// Elements J .. kEpiVec-1 of one vector (values vals) in pass `pass`, c at
/// element J's coordinates and stepped past the last one.
template <class C, class E, bool kAtOnce, class Tgt, int J = 0>
PURLIN_HD void epiVecElems(Tgt &t, const Shared &S, int r, const float *vals,
                           int pass, int64_t *c, const int64_t *ext,
                           float &acc, const float *red, const float *u,
                           EpiVecOut &o) {
  if constexpr (J < kEpiVec) {
    const EpiVecElem<Tgt, J, kAtOnce> x{{t, S, r}, vals[J], o};
    E::element(x, pass, c, S.P, acc, red, u);
    nextInner<C, E>(ext, c);
    epiVecElems<C, E, kAtOnce, Tgt, J + 1>(t, S, r, vals, pass, c, ext, acc,
                                           red, u, o);
  }
}
/// Stores what `o` holds of rank r's outputs: each buffer's whole run as
/// EpiVecRank::store8 does (one vector where aligned), a part of one
/// element by element.
template <class Tgt>
PURLIN_HD void epiVecFlush(Tgt &t, const Shared &S, int r, const EpiVecOut &o) {
  const EpiVecRank<Tgt> x{{t, S, r}};
PURLIN_UNROLL
  for (int b = 0; b < kMaxBuffers; ++b) {
    if (!o.held[b])
      continue;
    if (o.held[b] == (1u << kEpiVec) - 1) {
      x.store8(b, o.at[b], o.v[b]);
      continue;
    }
PURLIN_UNROLL
    for (int j = 0; j < kEpiVec; ++j)
      if (o.held[b] >> j & 1u)
        x.store(b, o.at[b] + j, o.v[b][j]);
  }
}
} // namespace detail

} // namespace exec
} // namespace purlin
