/* purlin.h — the thin runtime's C API: communicators of R ranks over the
 * GPUs of one process, collectives compiled by purlinc, stream-ordered
 * launches that never synchronize the host and work under CUDA-graph
 * capture. Every call returns a status; purlinGetLastError() says why.
 *
 *   purlinComm_t comm;  int devs[8] = {0,0,0,0,0,0,0,0};   // 8 virtual ranks
 *   purlinCommCreate(&comm, 8, devs);
 *   purlinColl_t ar;
 *   purlinCollCreate(&ar, comm, purlin_collective_all_reduce(), "C=1048576");
 *   int64_t C = 4096;  void *bufs[8 * 2] = {x0, y0, x1, y1, ...};
 *   purlinArgs a = {PURLIN_BF16, PURLIN_SUM, &C, 1, NULL, 0, bufs, NULL};
 *   purlinLaunch(ar, &a);
 *
 * Table parameters (all_to_all_v's cnt[R][R]) follow the scalars, row-major:
 *   int64_t M = 1024, cnt[8 * 8] = {...};    // cnt[s*8 + d] <= M
 *   purlinArgs v = {PURLIN_F32, PURLIN_COPY, &M, 1, cnt, 64, bufs, NULL};
 */
#ifndef PURLIN_PURLIN_H
#define PURLIN_PURLIN_H

#include <stddef.h>
#include <stdint.h>

#include "purlin/spec/Entry.h" /* purlin_collective_info: what purlinc exports */
#include "purlin/spec/Numbering.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum purlinStatus {
  PURLIN_SUCCESS = 0,
  PURLIN_ERR_INVALID_ARGUMENT = 1, /* a null handle, a bad value */
  PURLIN_ERR_BAD_RANK_COUNT = 2,   /* R outside [1, 32] or not what a plan allows */
  PURLIN_ERR_NULL_BUFFER = 3,      /* a buffer of non-zero size is null */
  PURLIN_ERR_MISALIGNED = 4,       /* a buffer not aligned to its element */
  PURLIN_ERR_UNSUPPORTED_TYPE = 5, /* element type not allowed by the collective */
  PURLIN_ERR_UNSUPPORTED_OP = 6,   /* reduction op not allowed */
  PURLIN_ERR_PARAM_RANGE = 7,      /* a parameter beyond the instance's maximum */
  PURLIN_ERR_NO_DEVICE = 8,        /* a GPU that does not exist */
  PURLIN_ERR_NO_PEER_ACCESS = 9,   /* two GPUs that cannot reach each other */
  PURLIN_ERR_NO_PLAN = 10,         /* no plan fits (e.g. in place, none safe) */
  PURLIN_ERR_CUDA = 11,            /* a CUDA call failed (message has it) */
  PURLIN_ERR_TIMEOUT = 12,         /* a wait timed out on the device */
  PURLIN_ERR_OUT_OF_MEMORY = 13,
  PURLIN_ERR_BAD_COLLECTIVE = 14,  /* not compiled for a GPU, bad description */
  PURLIN_ERR_NOT_READY = 15,       /* kernels not built ahead of time nor
                                      compiled yet, in a graph capture:
                                      purlinCollPrepare first */
  PURLIN_ERR_COMPILE = 16,         /* compiling kernels at first use failed
                                      (the message has NVRTC's log) */
  PURLIN_ERR_BOOTSTRAP = 17,       /* the processes of a communicator could
                                      not meet or exchange: a rank that never
                                      arrived or is gone (named), a bad id */
  PURLIN_ERR_NOT_REGISTERED = 18,  /* a multi-process launch's buffers
                                      that are neither purlinMemAlloc memory
                                      nor registered (purlinCommRegister)
                                      need more than the staging area; or
                                      (purlinCommCheck, once, not sticky) a
                                      CUDA graph replayed a launch whose
                                      buffers were recorded in the capture
                                      before purlinCommRegisterGraphBuffers:
                                      that launch did nothing */
  PURLIN_ERR_MISMATCH = 19         /* a rank of a multi-process launch
                                      called with other arguments (count,
                                      type, op, root, tables) than a peer:
                                      seen on the device, before any data
                                      moved between them; sticky, like a
                                      timeout (purlinCommCheck); or the
                                      ranks recorded different buffers in
                                      their captures
                                      (purlinCommRegisterGraphBuffers) */
} purlinStatus;

/* Element types and ops: PURLIN_F32 = 0, PURLIN_F16, PURLIN_BF16,
 * PURLIN_F8E4M3, PURLIN_F8E5M2, PURLIN_I8, PURLIN_U8, PURLIN_I32, PURLIN_I64,
 * PURLIN_F64; PURLIN_COPY = 0, PURLIN_SUM, PURLIN_PROD, PURLIN_MIN,
 * PURLIN_MAX, PURLIN_AVG -- expanded from the one numbering of
 * purlin/spec/Numbering.h. */
typedef enum purlinDataType {
#define PURLIN_X(E, name, bytes) PURLIN_##E,
  PURLIN_DTYPES(PURLIN_X)
#undef PURLIN_X
} purlinDataType;
typedef enum purlinRedOp {
#define PURLIN_X(E, Camel, name) PURLIN_##E,
  PURLIN_REDOPS(PURLIN_X)
#undef PURLIN_X
} purlinRedOp;

typedef struct purlinComm *purlinComm_t;
typedef struct purlinColl *purlinColl_t;

/* The last error message of this thread ("" after a success). */
const char *purlinGetLastError(void);
const char *purlinStatusString(purlinStatus s);

/* A communicator of `nranks` ranks; rank r runs on GPU rankDevices[r].
 * Ranks of one GPU ("virtual ranks") must be consecutive; they run in one
 * launch. Peer access is enabled between distinct GPUs. */
purlinStatus purlinCommCreate(purlinComm_t *comm, int nranks,
                              const int *rankDevices);
purlinStatus purlinCommDestroy(purlinComm_t comm);
/* One process per GPU (issue #14; docs/multiprocess.md), as NCCL does it:
 * one process calls purlinGetUniqueId, hands the id to the others (over
 * its own channel: MPI_Bcast, a file, the command line), and every process
 * calls purlinCommInitRank with it: this process is rank `rank` of
 * `nranks`, on GPU `device` (< 0: rank % visible GPUs). The id holds the
 * address of a TCP socket of the process that made it, which must be rank
 * 0's (PURLIN_BOOTSTRAP_ADDR: the IPv4 address to put in it, default
 * 127.0.0.1: the processes share one host). Every exchange waits at most
 * PURLIN_BOOTSTRAP_TIMEOUT_MS (default 60000): a rank that never arrives or
 * dies is PURLIN_ERR_BOOTSTRAP, naming it, never a hang.
 *
 * Such a communicator differs from purlinCommCreate's in three ways:
 *  - purlinCommInitRank, purlinCommDestroy, purlinCommSplit,
 *    purlinCollCreate, purlinCollDestroy, purlinMemAlloc, purlinMemFree,
 *    purlinCommRegister, purlinCommDeregister,
 *    purlinCommRegisterGraphBuffers are collective: every process calls them, in the
 *    same order, with the same arguments (sizes, maxParams);
 *  - purlinLaunch's buffers are this rank's only ([buffer]); in memory of
 *    purlinMemAlloc or in a registered buffer they are used where they
 *    are, at the same offset on every rank; any other buffer of an eager
 *    launch is copied through the communicator's staging area
 *    (PURLIN_STAGING_BYTES a rank, 32 MiB by default, allocated at init;
 *    PURLIN_ERR_NOT_REGISTERED when the launch needs more; every rank must
 *    stage the same buffers), and under CUDA graph capture recorded for
 *    purlinCommRegisterGraphBuffers; streams[0] is this GPU's stream;
 *  - purlinCommDeviceCount is 1 (this process's GPU).
 * Peer memory is CUDA VMM memory (cuMemCreate, POSIX fds over a Unix-domain
 * socket), else cudaMalloc memory shared by cudaIpc handles
 * (PURLIN_MP_MEMORY=vmm|ipc forces one); NVLink multicast is never used. */
#define PURLIN_UNIQUE_ID_BYTES 128
typedef struct purlinUniqueId {
  char internal[PURLIN_UNIQUE_ID_BYTES];
} purlinUniqueId;
purlinStatus purlinGetUniqueId(purlinUniqueId *id);
purlinStatus purlinCommInitRank(purlinComm_t *comm, int nranks,
                                purlinUniqueId id, int rank, int device);
/* The same over the application's own collectives (its MPI communicator, a
 * torch.distributed store), so purlin needs no rendezvous of its own:
 * allgather(send, recv, bytes, ctx) puts every rank's `bytes` bytes at
 * recv + r * bytes (MPI_Allgather) and returns 0 on success; barrier may
 * be NULL (an allgather then). Their timeouts are the application's. */
typedef struct purlinBootstrapCallbacks {
  int (*allgather)(const void *send, void *recv, size_t bytes, void *ctx);
  int (*barrier)(void *ctx);
  void *ctx;
} purlinBootstrapCallbacks;
purlinStatus purlinCommInitRankCallbacks(purlinComm_t *comm, int nranks,
                                         int rank, int device,
                                         const purlinBootstrapCallbacks *cb);
/* ncclCommSplit: the ranks of `comm` that pass one `color` form a new
 * communicator, ordered by `key` (ties: by rank in `comm`), on the same
 * GPU; color PURLIN_SPLIT_NOCOLOR: *sub is NULL. Collective over `comm`;
 * the groups then meet over TCP (their first rank's id). */
#define PURLIN_SPLIT_NOCOLOR (-1)
purlinStatus purlinCommSplit(purlinComm_t comm, int color, int key,
                             purlinComm_t *sub);
/* Frees what this process holds of `comm` without waiting for any peer
 * (after a timeout, a peer gone) and drops its connections, so peers
 * blocked in an exchange fail at once. */
purlinStatus purlinCommAbort(purlinComm_t comm);
/* This process's rank in `comm` (0 for purlinCommCreate's communicators),
 * and whether its ranks span processes. */
int purlinCommRank(purlinComm_t comm);
int purlinCommIsMultiProcess(purlinComm_t comm);
/* Symmetric memory of a multi-process communicator: `bytes` (zeroed) on
 * this process's GPU, mapped by every peer. Collective. */
purlinStatus purlinMemAlloc(purlinComm_t comm, size_t bytes, void **ptr);
purlinStatus purlinMemFree(purlinComm_t comm, void *ptr);
/* Registers [ptr, ptr + bytes) of device memory the application allocated
 * (cudaMalloc, or cuMemCreate with POSIX fd handles): every rank's buffer is
 * mapped by every peer, so launches may use it (and any part of it at the
 * same offset on every rank). Collective, same `bytes` everywhere. A buffer
 * registered before a launch is captured is resolved at the purlinLaunch
 * call; one that is not can be registered after the capture
 * (purlinCommRegisterGraphBuffers). Deregister (collective too) before
 * freeing the memory. */
purlinStatus purlinCommRegister(purlinComm_t comm, void *ptr, size_t bytes);
purlinStatus purlinCommDeregister(purlinComm_t comm, void *ptr);
/* CUDA graphs whose buffers are allocated during the capture (a
 * framework's graph pool; vLLM's register_graph_buffers). A multi-process
 * launch being captured (cudaStreamIsCapturing) whose buffer is not
 * registered is not refused: the buffer is recorded (this rank's pointer
 * and bytes, in capture order) and the launch captured reads every rank's
 * addresses from device memory, which is not ready yet. Replaying it now
 * does nothing on this rank (outputs untouched) and purlinCommCheck then
 * returns PURLIN_ERR_NOT_REGISTERED once (not sticky; purlinLaunch does not
 * fail on it); a peer whose launch is ready meanwhile waits for this rank
 * until the device timeout.
 * purlinCommRegisterGraphBuffers (collective, after the capture ends, no
 * replay in flight) registers every buffer recorded since its last call,
 * as purlinCommRegister does (purlinCommDeregister or purlinCommDestroy
 * frees them; a buffer recorded again inside an earlier one, at the same
 * offset on every rank, shares its registration), writes the peers'
 * addresses into the captured launches and makes them ready: replays then
 * run. Every rank must have recorded as many buffers, of the same sizes in
 * the same order (PURLIN_ERR_MISMATCH otherwise, on every rank, naming the
 * counts or the buffer); on any failure the recorded list is dropped and
 * those graphs stay unready (recapture them). Each such captured launch
 * holds a slot of device memory (about 4 KiB) until the communicator is
 * destroyed. On a communicator of one process (purlinCommCreate) nothing
 * is ever recorded: a no-op returning PURLIN_SUCCESS. */
purlinStatus purlinCommRegisterGraphBuffers(purlinComm_t comm);

/* Distinct GPUs, in rank order: launches take one stream per GPU. */
int purlinCommDeviceCount(purlinComm_t comm);
int purlinCommDevice(purlinComm_t comm, int i);
/* Wait timeout on the device for collectives created afterwards (default
 * 10 s, or the environment's PURLIN_TIMEOUT_MS). */
purlinStatus purlinCommSetTimeout(purlinComm_t comm, double seconds);
/* Reports a device-side error (PURLIN_ERR_TIMEOUT) without synchronizing:
 * the device writes it into mapped host memory. Sticky. */
purlinStatus purlinCommCheck(purlinComm_t comm);

/* An instance of a compiled collective on `comm`, with signal memory and
 * peer-visible scratch sized for parameters up to `maxParams`
 * ("C=1048576,root=0": every count/root parameter; R is the comm's). A
 * table may be given one value, the largest entry any launch passes
 * ("M=4096,cnt=1024"); without it, its declared bound ("<= M") at the
 * maximum counts. All tables together hold at most 96 entries at the
 * maximum values (PURLIN_ERR_PARAM_RANGE beyond). */
purlinStatus purlinCollCreate(purlinColl_t *coll, purlinComm_t comm,
                              const purlin_collective_info *info,
                              const char *maxParams);
purlinStatus purlinCollDestroy(purlinColl_t coll);
/* The count/root parameters (R excluded) in the order purlinArgs.scalars
 * takes them, and the buffers in the order purlinArgs.buffers takes them. */
int purlinCollScalarCount(purlinColl_t coll);
const char *purlinCollScalarName(purlinColl_t coll, int i);
int purlinCollBufferCount(purlinColl_t coll);
/* Elements per rank of buffer `b` under `scalars` (-1 on error, also when
 * the size needs a table: then purlinCollBufferElemsTables). */
int64_t purlinCollBufferElems(purlinColl_t coll, const int64_t *scalars,
                              int b);
/* The same with table entries, as purlinArgs.tables takes them. */
int64_t purlinCollBufferElemsTables(purlinColl_t coll, const int64_t *scalars,
                                    const int64_t *tables, int b);
/* The table parameters, in the order purlinArgs.tables takes them: each
 * table's entries row-major, tables one after another in declaration order.
 * Extent `dim` of table `t` and the entries of all tables under `scalars`
 * (the value of purlinArgs.ntableWords), -1 on error; the largest entry the
 * instance accepts (maxParams). Every entry must also lie within the table's
 * declared bound under the launch's scalars. */
int purlinCollTableCount(purlinColl_t coll);
const char *purlinCollTableName(purlinColl_t coll, int t);
int purlinCollTableDims(purlinColl_t coll, int t);
int64_t purlinCollTableExtent(purlinColl_t coll, const int64_t *scalars, int t,
                              int dim);
int64_t purlinCollTableWords(purlinColl_t coll, const int64_t *scalars);
int64_t purlinCollTableMax(purlinColl_t coll, int t);
/* The strategy the last launch used ("direct", "two_shot", ...). */
const char *purlinCollLastPlan(purlinColl_t coll);

typedef struct purlinArgs {
  int dtype; /* purlinDataType */
  int op;    /* purlinRedOp; ignored by copy collectives */
  const int64_t *scalars; int nscalars; /* purlinCollScalarName order */
  const int64_t *tables; int ntableWords; /* purlinCollTableName order,
                                             each row-major; NULL, 0 when
                                             the collective has none */
  void *const *buffers; /* [rank * purlinCollBufferCount + buffer] */
  void *const *streams; /* cudaStream_t per GPU (purlinCommDevice order);
                           NULL: the default stream */
} purlinArgs;

/* Makes the kernels for every element type of dtypes[0..ndtypes) with
 * every op of ops[0..nops) ready. purlinc builds the kernels of a few pairs
 * ahead of time (its --aot option: by default what the source binds, else
 * bf16, f16 and f32 with sum); another pair's are compiled at its first
 * launch (NVRTC: seconds; the cubin is cached on disk, PURLIN_CACHE_DIR,
 * docs/runtime.md). This compiles them now, the pairs in parallel, outside
 * any graph capture: a launch being captured whose kernels are not ready
 * fails with PURLIN_ERR_NOT_READY. Types and ops are checked as a launch's
 * are; ops are ignored by copy collectives (nops may be 0). */
purlinStatus purlinCollPrepare(purlinColl_t coll, const int *dtypes,
                               int ndtypes, const int *ops, int nops);

/* Validates, chooses a plan (by size; an in-place-safe one when an output
 * overlaps an input) and launches every GPU's ranks on its stream. Never
 * synchronizes the host; capturable once its kernels are ready (see
 * purlinCollPrepare; PURLIN_ERR_NOT_READY otherwise). A collective compiled
 * with bound values (purlinc --ranks, --count, --root, --dtype, --op, -D, or
 * a concrete element type in the source) takes only those: another rank
 * count is PURLIN_ERR_BAD_RANK_COUNT at purlinCollCreate, another element
 * type PURLIN_ERR_UNSUPPORTED_TYPE, another op PURLIN_ERR_UNSUPPORTED_OP,
 * another count or root PURLIN_ERR_PARAM_RANGE, each message naming the
 * bound value. Tables: a wrong number of entries is
 * PURLIN_ERR_INVALID_ARGUMENT; an entry negative, beyond the table's bound
 * or beyond the instance's maximum is PURLIN_ERR_PARAM_RANGE. The entries
 * are read at the call: a graph captured with them keeps them. On a
 * multi-process communicator every process passes the same scalars
 * and tables. */
purlinStatus purlinLaunch(purlinColl_t coll, const purlinArgs *args);

#ifdef __cplusplus
}
#endif
#endif
