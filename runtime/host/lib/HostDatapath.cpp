// The host datapath ("host" in the target table): ranks and lanes of a plan
// compiled for the host target as host threads, run to completion. Its
// queue is the launch's HostAtoms (atom-kernels/host/target.h).
#include "purlin/host/HostRunner.h"

#include "host/target.h"
#include "purlin/runtime/Target.h"

#include <functional>
#include <vector>

namespace purlin {
namespace host {
namespace {
class HostDatapath final : public rt::RuntimeTarget {
public:
  const char *name() const override { return "host"; }

  bool hasEntry(const purlin_plan_info &p) const override {
    return p.host_entry != nullptr;
  }

  purlinStatus launch(const purlin_collective_info &info, int plan,
                      const exec::Shared &S, int first, int n, int dtype,
                      int op, void *queue, std::string &msg) const override {
    (void)dtype, (void)op; // in S (the moves' op) and the HostAtoms
    purlin_host_entry_t entry = info.plans[plan].host_entry,
                        apply = info.plans[plan].host_apply;
    HostAtoms *cfg = static_cast<HostAtoms *>(queue);
    // An unfused plan's epilogue as a launch of its own, where every rank
    // runs in this launch, as the SM datapath runs it: the plan's lanes
    // return before it, then it runs on a lane count of its own (one more
    // than the plan's, so that its rows are cut otherwise).
    // Written only when they change: ranks that launch on their own
    // (RunOptions::rankStreams) share one HostAtoms and read them at once.
    const bool apart = apply && S.oneLaunch && !cfg->applyInLaunch;
    if (cfg->apart != apart || cfg->applyLanes != S.L + 1) {
      cfg->apart = apart;
      cfg->applyLanes = S.L + 1;
    }
    std::vector<std::function<void()>> jobs;
    // Lanes 0 .. liveLanesOf(S) - 1 (Shared::liveLanes: a one-shot
    // epilogue's lanes without a row do not run).
    for (int r = first; r < first + n; ++r)
      for (int l = 0; l < exec::liveLanesOf(S); ++l)
        jobs.push_back([=, &S] { entry(&S, r, l, queue); });
    runConcurrently(jobs);
    if (cfg->apart && !cfg->timedOut.load()) {
      jobs.clear();
      for (int r = first; r < first + n; ++r)
        for (int l = 0; l < cfg->applyLanes; ++l)
          jobs.push_back([=, &S] { apply(&S, r, l, queue); });
      runConcurrently(jobs);
    }
    if (cfg->timedOut.load()) {
      msg = "a wait timed out (deadlock or lost notify)";
      return PURLIN_ERR_TIMEOUT;
    }
    return PURLIN_SUCCESS;
  }
};
} // namespace

const rt::RuntimeTarget &datapath() {
  static const HostDatapath kHost;
  return kHost;
}

} // namespace host
} // namespace purlin
