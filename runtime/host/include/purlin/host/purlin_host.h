/* purlin_host.h -- the host target's C API: launches a collective compiled
 * with `purlinc --target=host` on buffers the caller owns, every rank and
 * lane as a host thread of this process, and returns when every rank is
 * done. What the Python package (python/purlin) binds with ctypes; plain C,
 * no MLIR, no CUDA.
 *
 *   purlinHostColl_t c;
 *   purlinHostCollCreate(&c, purlin_collective_all_reduce());
 *   void *bufs[4 * 2] = {x0, y0, x1, y1, x2, y2, x3, y3};   // [rank][buffer]
 *   purlinHostLaunch(c, "R=4,C=1024,T=f32,op=sum", bufs, NULL, 0);
 *
 * A binding is "NAME=VALUE,..." over the source's parameter names: ranks,
 * counts, roots and group sizes as integers, a type parameter as an
 * element type name (f32, bf16, ...), an op parameter as an op name (sum,
 * max, ...), a table as its row-major entries joined by ':'
 * ("cnt=1:0:2:3"). Values bound at compile time may be left out. Every
 * call returns a purlinStatus (purlin/purlin.h); purlinHostLastError()
 * says why (per thread).
 */
#ifndef PURLIN_HOST_PURLIN_HOST_H
#define PURLIN_HOST_PURLIN_HOST_H

#include <stdint.h>

#include "purlin/spec/Entry.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct purlinHostColl *purlinHostColl_t;

const char *purlinHostLastError(void);

/* Reads the collective's description; PURLIN_ERR_BAD_COLLECTIVE when it is
 * not compiled for the host target or its description does not parse. */
int purlinHostCollCreate(purlinHostColl_t *coll,
                         const purlin_collective_info *info);
void purlinHostCollDestroy(purlinHostColl_t coll);

/* The collective's name and its parameters in declaration order: name,
 * kind ("ranks", "count", "root", "type", "redop", "table", "group") and the
 * value bound at compile time as text ("" while symbolic). */
const char *purlinHostCollName(purlinHostColl_t coll);
int purlinHostParamCount(purlinHostColl_t coll);
const char *purlinHostParamName(purlinHostColl_t coll, int i);
const char *purlinHostParamKind(purlinHostColl_t coll, int i);
const char *purlinHostParamBound(purlinHostColl_t coll, int i);

/* Its buffers in the order purlinHostLaunch takes them: name, whether it
 * is an output, its element type (a concrete type name, or the name of the
 * type parameter). */
int purlinHostBufferCount(purlinHostColl_t coll);
const char *purlinHostBufferName(purlinHostColl_t coll, int b);
int purlinHostBufferIsOutput(purlinHostColl_t coll, int b);
const char *purlinHostBufferType(purlinHostColl_t coll, int b);

/* Elements per rank of buffer `b` under `binding` (*elems): every scalar
 * parameter bound, values bound at compile time respected (a launch checks
 * the rest: maps inside their buffers, roots below R, ...). */
int purlinHostBufferElems(purlinHostColl_t coll, const char *binding, int b,
                          int64_t *elems);

/* Runs the collective under `binding` on buffers[rank * nbuffers + b]:
 * chooses the plan (by size, in-place-safe when an output overlaps an
 * input; `strategy` names one, NULL: any), runs every rank and lane on
 * threads and joins them. timeoutMs bounds every wait (0: 20 s). */
int purlinHostLaunch(purlinHostColl_t coll, const char *binding,
                     void *const *buffers, const char *strategy,
                     int64_t timeoutMs);
/* The strategy the last launch ran ("direct", "two_shot", ...). */
const char *purlinHostCollLastPlan(purlinHostColl_t coll);

#ifdef __cplusplus
}
#endif
#endif
