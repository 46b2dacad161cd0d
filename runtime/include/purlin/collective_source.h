/* collective_source.h -- a collective whose GPU kernels are all compiled at
 * first use (NVRTC, docs/runtime.md), for a program that has purlinc's
 * output but no nvcc: the Python package (docs/python.md).
 *
 * A collective has the same plan table and description on every target
 * (the plans are chosen before the lowering), so a build for the host
 * target with the system C++ compiler (`purlinc --target=host`) supplies
 * them, and the plans' code for a GPU row (the text purlinc's `--target=
 * sm_90` output carries as kSource) supplies the kernels:
 *
 *   const purlin_collective_info *ar;
 *   purlinCollectiveFromSource(purlin_collective_all_reduce(),   // host build
 *                              "sm_90", plansText, &ar);
 *   purlinCollCreate(&coll, comm, ar, "C=1048576");
 *   ...
 *   purlinCollectiveFree(ar);        // after every purlinCollDestroy of it
 */
#ifndef PURLIN_COLLECTIVE_SOURCE_H
#define PURLIN_COLLECTIVE_SOURCE_H

#include "purlin/purlin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A collective for `target` (a GPU row of the target table) with the
 * description and plan table of `plans` (a collective compiled for any
 * target; copied) and the plans' code `source` (copied). No kernel is
 * linked in: every element type and op is compiled at its first launch or
 * by purlinCollPrepare, and cached on disk. PURLIN_ERR_BAD_COLLECTIVE for
 * an unknown target or a description that does not parse. */
purlinStatus purlinCollectiveFromSource(const purlin_collective_info *plans,
                                        const char *target, const char *source,
                                        const purlin_collective_info **out);
purlinStatus purlinCollectiveFree(const purlin_collective_info *info);

#ifdef __cplusplus
}
#endif
#endif
