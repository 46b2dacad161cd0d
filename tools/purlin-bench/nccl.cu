// purlin-bench --nccl: NCCL's collective over the same buffers and sizes,
// in the same process, one rank per GPU (ncclCommInitAll; grouped
// send/recv for all-to-all, gather and scatter). Built without NCCL
// (PURLIN_NCCL off or not found), Nccl::available() is false.
#include "bench.h"

#ifdef PURLIN_HAVE_NCCL
#include <nccl.h>

#define NCCL_OK(x)                                                             \
  do {                                                                         \
    ncclResult_t r_ = (x);                                                     \
    if (r_ != ncclSuccess) {                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,          \
                   ncclGetErrorString(r_));                                    \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)
#endif

using namespace purlin;

namespace bench {

#ifdef PURLIN_HAVE_NCCL
namespace {
bool ncclTypeOf(DType t, ncclDataType_t &n) {
  switch (t) {
  case DType::F32:
    n = ncclFloat32;
    return true;
  case DType::F16:
    n = ncclFloat16;
    return true;
  case DType::BF16:
    n = ncclBfloat16;
    return true;
#if NCCL_VERSION_CODE >= 22400
  case DType::F8E4M3:
    n = ncclFloat8e4m3;
    return true;
  case DType::F8E5M2:
    n = ncclFloat8e5m2;
    return true;
#endif
  case DType::I8:
    n = ncclInt8;
    return true;
  case DType::U8:
    n = ncclUint8;
    return true;
  case DType::I32:
    n = ncclInt32;
    return true;
  case DType::I64:
    n = ncclInt64;
    return true;
  case DType::F64:
    n = ncclFloat64;
    return true;
  default:
    return false;
  }
}

ncclRedOp_t ncclOpOf(RedOp o) {
  switch (o) {
  case RedOp::Prod:
    return ncclProd;
  case RedOp::Min:
    return ncclMin;
  case RedOp::Max:
    return ncclMax;
  case RedOp::Avg:
    return ncclAvg;
  default:
    return ncclSum;
  }
}

/// NCCL's counterpart of purlin collective `name` on every rank (root 0),
/// in one group: in/out are each rank's buffers, inE/outE their elements.
bool ncclCall(const std::string &name, const std::vector<ncclComm_t> &comms,
              const std::vector<cudaStream_t> &ss,
              const std::vector<void *> &in, const std::vector<void *> &out,
              int64_t inE, int64_t outE, ncclDataType_t t, int es,
              ncclRedOp_t op) {
  const int R = (int)comms.size();
  bool known = true;
  NCCL_OK(ncclGroupStart());
  for (int r = 0; r < R; ++r) {
    ncclComm_t c = comms[r];
    cudaStream_t s = ss[r];
    if (name == "all_reduce")
      NCCL_OK(ncclAllReduce(in[r], out[r], outE, t, op, c, s));
    else if (name == "all_gather")
      NCCL_OK(ncclAllGather(in[r], out[r], inE, t, c, s));
    else if (name == "reduce_scatter")
      NCCL_OK(ncclReduceScatter(in[r], out[r], outE, t, op, c, s));
    else if (name == "broadcast")
      NCCL_OK(ncclBroadcast(in[r], out[r], outE, t, 0, c, s));
    else if (name == "reduce")
      NCCL_OK(ncclReduce(in[r], out[r], inE, t, op, 0, c, s));
    else if (name == "all_to_all") {
      const int64_t k = inE / R;
      for (int q = 0; q < R; ++q) {
        NCCL_OK(ncclSend((char *)in[r] + q * k * es, k, t, q, c, s));
        NCCL_OK(ncclRecv((char *)out[r] + q * k * es, k, t, q, c, s));
      }
    } else if (name == "gather") {
      NCCL_OK(ncclSend(in[r], inE, t, 0, c, s));
      if (r == 0)
        for (int q = 0; q < R; ++q)
          NCCL_OK(ncclRecv((char *)out[r] + q * inE * es, inE, t, q, c, s));
    } else if (name == "scatter") {
      if (r == 0)
        for (int q = 0; q < R; ++q)
          NCCL_OK(ncclSend((char *)in[r] + q * outE * es, outE, t, q, c, s));
      NCCL_OK(ncclRecv(out[r], outE, t, 0, c, s));
    } else {
      known = false;
    }
  }
  NCCL_OK(ncclGroupEnd());
  return known;
}
} // namespace

struct Nccl::Impl {
  std::vector<ncclComm_t> comms;
  ncclDataType_t type = ncclFloat32;
  bool hasType = false;
};

bool Nccl::available() { return true; }

int Nccl::version() {
  int v = 0;
  ncclGetVersion(&v);
  return v;
}

bool Nccl::init(const std::vector<int> &devs, DType t) {
  impl_ = new Impl;
  impl_->comms.resize(devs.size());
  NCCL_OK(ncclCommInitAll(impl_->comms.data(), (int)devs.size(), devs.data()));
  impl_->hasType = ncclTypeOf(t, impl_->type);
  return impl_->hasType;
}

double Nccl::time(const std::string &name, const std::vector<cudaStream_t> &ss,
                  const std::vector<int> &devs, const std::vector<void *> &in,
                  const std::vector<void *> &out, int64_t inE, int64_t outE,
                  int es, RedOp op, int iters, int warm, bool graph) {
  if (!impl_ || !impl_->hasType)
    return -1;
  const ncclRedOp_t nop = ncclOpOf(op);
  auto call = [&] {
    return ncclCall(name, impl_->comms, ss, in, out, inE, outE, impl_->type, es,
                    nop);
  };
  if (!call())
    return -1;
  for (cudaStream_t s : ss)
    CUDA_OK(cudaStreamSynchronize(s));
  return timeMulti(
      ss, devs, [&] { call(); }, iters, warm, graph);
}

Nccl::~Nccl() {
  if (!impl_)
    return;
  for (ncclComm_t c : impl_->comms)
    ncclCommDestroy(c);
  delete impl_;
}
#else
struct Nccl::Impl {};
bool Nccl::available() { return false; }
int Nccl::version() { return 0; }
bool Nccl::init(const std::vector<int> &, DType) { return false; }
double Nccl::time(const std::string &, const std::vector<cudaStream_t> &,
                  const std::vector<int> &, const std::vector<void *> &,
                  const std::vector<void *> &, int64_t, int64_t, int, RedOp,
                  int, int, bool) {
  return -1;
}
Nccl::~Nccl() {}
#endif

} // namespace bench
