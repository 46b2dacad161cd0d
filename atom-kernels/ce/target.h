// The copy-engine target's header for generated code (Targets.def row
// "ce"): the recording target and the schedule (schedule.h), and the entry
// macros (docs/generated-shape.md).
#pragma once

#include "ce/schedule.h"

#define PURLIN_TARGET_NAME "ce"
// PURLIN_PLAN_ENTRY(NAME, FN, REDUCES[, INNER_SYNCS[, LINES]]): entry_NAME records
// rank `rank`'s schedule into the ce::Schedule `sched` (lane: unused, the
// schedule has one). A plan that reduces records the reason instead.
#define PURLIN_PLAN_ENTRY(NAME, FN, REDUCES, ...)                               \
  inline void entry_##NAME(const purlin_shared_t *S, int rank, int lane,       \
                           void *sched) {                                      \
    (void)lane;                                                                \
    purlin::ce::Schedule *s = (purlin::ce::Schedule *)sched;                   \
    if (REDUCES) {                                                             \
      s->error = purlin::ce::kReducesError;                                    \
      return;                                                                  \
    }                                                                          \
    purlin::ce::Target t(*S, rank, s);                                         \
    FN(t);                                                                     \
  }
#define PURLIN_HOST_ENTRY(NAME) entry_##NAME
#define PURLIN_HOST_APPLY(NAME) nullptr
#define PURLIN_CUDA_ENTRY(NAME) nullptr
