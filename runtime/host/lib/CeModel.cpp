// The host runner's model of the copy-engine datapath ("ce" in the target
// table): the schedule the CUDA runtime plays as DMA copies and stream
// memory operations (atom-kernels/ce/target.h), played here by one thread
// per rank with memcpy and atomic flags, under the host target's random
// pauses. So the plan walking, the copies' runs and the token protocol are
// tested on every example without a GPU. A notify that finds its word's
// token not yet consumed is reported ("overrun"): on a GPU it would be lost
// and a wait would hang.
#include "purlin/host/HostRunner.h"

#include "ce/schedule.h"
#include "host/target.h"
#include "purlin/runtime/Target.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace purlin {
namespace host {
namespace {

/// One rank's schedule, played to its end (false: a wait timed out or a
/// token was overrun; `why` says which).
bool play(const ce::Schedule &s, HostAtoms &cfg, uint64_t seed,
          std::string &why) {
  std::mt19937_64 rng(seed);
  auto jitter = [&] {
    if (!cfg.seed || cfg.maxDelayUs <= 0)
      return;
    const uint64_t x = rng();
    if (x % 8 == 0)
      std::this_thread::sleep_for(std::chrono::microseconds((x >> 8) % cfg.maxDelayUs));
    else if (x % 8 == 1)
      std::this_thread::yield();
  };
  for (const ce::Op &o : s.ops) {
    jitter();
    // The low 32 bits of the word, as cuStream*Value32 address them.
    uint32_t *w = reinterpret_cast<uint32_t *>(o.word);
    switch (o.kind) {
    case ce::Op::Copy:
      std::memmove(o.dst, o.src, (size_t)o.bytes);
      break;
    case ce::Op::Signal: {
      if (__atomic_load_n(w, __ATOMIC_ACQUIRE) != 0) {
        why = "a notify found its signal word's token not yet consumed "
              "(overrun: the token protocol does not hold for this plan)";
        return false;
      }
      __atomic_store_n(w, ce::kToken, __ATOMIC_RELEASE);
      HostAtoms::Bucket &b = cfg.bucketOf(o.word);
      { std::lock_guard<std::mutex> lk(b.mu); }
      b.cv.notify_all();
      break;
    }
    case ce::Op::Wait: {
      auto ready = [&] { return __atomic_load_n(w, __ATOMIC_ACQUIRE) == ce::kToken; };
      if (!ready()) {
        HostAtoms::Bucket &b = cfg.bucketOf(o.word);
        std::unique_lock<std::mutex> lk(b.mu);
        if (!b.cv.wait_for(lk, std::chrono::milliseconds(cfg.timeoutMs), ready)) {
          why = "a wait timed out (deadlock or lost notify)";
          return false;
        }
      }
      __atomic_store_n(w, 0u, __ATOMIC_RELEASE);
      break;
    }
    }
  }
  return true;
}

class CeModel final : public rt::RuntimeTarget {
public:
  const char *name() const override { return "ce"; }

  bool hasEntry(const purlin_plan_info &p) const override {
    return p.host_entry != nullptr;
  }

  purlinStatus launch(const purlin_collective_info &info, int plan,
                      const exec::Shared &S, int first, int n, int dtype,
                      int op, void *queue, std::string &msg) const override {
    (void)dtype, (void)op;
    std::vector<ce::Schedule> sched;
    if (!ce::record(info.plans[plan], S, first, n, sched, msg))
      return PURLIN_ERR_UNSUPPORTED_OP;
    HostAtoms &cfg = *static_cast<HostAtoms *>(queue);
    std::vector<std::string> why((size_t)n);
    std::atomic<int> failed{0};
    std::vector<std::function<void()>> jobs;
    for (int i = 0; i < n; ++i)
      jobs.push_back([&, i] {
        if (!play(sched[(size_t)i], cfg, cfg.seed * 7919 + (uint64_t)(first + i),
                  why[(size_t)i])) {
          failed.store(1);
          cfg.timedOut.store(1);
        }
      });
    runConcurrently(jobs);
    if (!failed.load())
      return PURLIN_SUCCESS;
    for (int i = 0; i < n; ++i)
      if (!why[(size_t)i].empty()) {
        msg = "rank " + std::to_string(first + i) + ": " + why[(size_t)i];
        break;
      }
    return PURLIN_ERR_TIMEOUT;
  }
};
} // namespace

const rt::RuntimeTarget &ceModel() {
  static const CeModel kCe;
  return kCe;
}

} // namespace host
} // namespace purlin
