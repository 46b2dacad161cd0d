// The copy-engine datapath (CeDatapath.h). A launch records the schedule of
// each of its ranks (ce::record: the generated plan run on the host CPU
// over the recording target) and plays it:
//   - the caller's stream forks one stream per rank (an event), and joins
//     them back at the end, so the launch is ordered like a kernel and is
//     captured into a CUDA graph whole (every rank in one launch: the
//     fork and the join order the ranks, ce/schedule.h);
//   - the copies between two syncs go as one cuMemcpyBatchAsync with
//     CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE (the copy engines, not
//     the SMs), split where one copy reads or writes what an earlier one of
//     the batch writes; under capture, or with PURLIN_CE_BATCH=0 or a driver
//     without it, one cudaMemcpyAsync each;
//   - a notify is cuStreamWriteValue32 of the token into the peer's signal
//     word (the default write carries a memory barrier: the copies before
//     it are visible first); a wait is cuStreamWaitValue32 (EQ token) on
//     this rank's word and a write of 0 (the token consumed).
// Driver entry points through cudaGetDriverEntryPointByVersion (no
// -lcuda, as Driver.cpp). A lost notify hangs the stream: stream memory
// waits have no timeout (the SM datapath's error word has no counterpart).
#include "CeDatapath.h"

#include "ce/schedule.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

namespace purlin {
namespace rt {
namespace ce {
namespace {
namespace sched = ::purlin::ce;

struct CeDriver {
  CUresult (*writeValue32)(CUstream, CUdeviceptr, cuuint32_t, unsigned) = nullptr;
  CUresult (*waitValue32)(CUstream, CUdeviceptr, cuuint32_t, unsigned) = nullptr;
  CUresult (*memcpyBatch)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t,
                          CUmemcpyAttributes *, size_t *, size_t,
                          CUstream) = nullptr; // 13.0's form (no failIdx)
  CUresult (*getErrorString)(CUresult, const char **) = nullptr;
};

const CeDriver &driver() {
  static CeDriver d;
  static std::once_flag once;
  std::call_once(once, [] {
    auto get = [](const char *name, int version, auto &fn) {
      void *p = nullptr;
      cudaDriverEntryPointQueryResult q;
      if (cudaGetDriverEntryPointByVersion(name, &p, version, cudaEnableDefault,
                                           &q) != cudaSuccess ||
          q != cudaDriverEntryPointSuccess || !p) {
        cudaGetLastError();
        return;
      }
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    get("cuStreamWriteValue32", 12000, d.writeValue32);
    get("cuStreamWaitValue32", 12000, d.waitValue32);
    get("cuMemcpyBatchAsync", 13000, d.memcpyBatch);
    get("cuGetErrorString", 12000, d.getErrorString);
  });
  return d;
}

std::string cuError(CUresult r, const char *what) {
  const char *s = nullptr;
  if (driver().getErrorString)
    driver().getErrorString(r, &s);
  return std::string(what) + ": " + (s ? s : "error " + std::to_string((int)r));
}

bool batchAllowed() {
  static const bool on = [] {
    const char *e = std::getenv("PURLIN_CE_BATCH");
    return !(e && e[0] == '0');
  }();
  return on;
}

/// The streams and events of one GPU: a stream per rank of a launch, the
/// fork event and a join event per rank; made once, reused by every launch.
struct DeviceStreams {
  std::vector<cudaStream_t> streams;
  std::vector<cudaEvent_t> joins;
  cudaEvent_t fork = nullptr;
};

std::mutex gMu; // the streams' table and the playing of a launch

cudaError_t streamsOf(int dev, int n, DeviceStreams *&out) {
  static std::map<int, DeviceStreams> all;
  DeviceStreams &d = all[dev];
  cudaError_t e = cudaSuccess;
  if (!d.fork)
    e = cudaEventCreateWithFlags(&d.fork, cudaEventDisableTiming);
  while (e == cudaSuccess && (int)d.streams.size() < n) {
    cudaStream_t s;
    cudaEvent_t j;
    e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (e == cudaSuccess)
      e = cudaEventCreateWithFlags(&j, cudaEventDisableTiming);
    if (e == cudaSuccess) {
      d.streams.push_back(s);
      d.joins.push_back(j);
    }
  }
  out = &d;
  return e;
}

/// Plays one rank's schedule on `s`; false with `msg`.
class Player {
public:
  Player(cudaStream_t s, bool batch) : s_(s), batch_(batch) {}

  bool play(const sched::Schedule &sc, std::string &msg) {
    const CeDriver &d = driver();
    for (const sched::Op &o : sc.ops) {
      if (o.kind == sched::Op::Copy) {
        if (overlapsPending(o) && !flush(msg))
          return false;
        dst_.push_back((CUdeviceptr)(uintptr_t)o.dst);
        src_.push_back((CUdeviceptr)(uintptr_t)o.src);
        size_.push_back((size_t)o.bytes);
        continue;
      }
      if (!flush(msg))
        return false;
      const CUdeviceptr w = (CUdeviceptr)(uintptr_t)o.word; // its low half
      CUresult r;
      if (o.kind == sched::Op::Signal) {
        r = d.writeValue32((CUstream)s_, w, sched::kToken, CU_STREAM_WRITE_VALUE_DEFAULT);
      } else {
        r = d.waitValue32((CUstream)s_, w, sched::kToken, CU_STREAM_WAIT_VALUE_EQ);
        if (r == CUDA_SUCCESS)
          r = d.writeValue32((CUstream)s_, w, 0, CU_STREAM_WRITE_VALUE_DEFAULT);
      }
      if (r != CUDA_SUCCESS) {
        msg = cuError(r, o.kind == sched::Op::Signal ? "cuStreamWriteValue32"
                                                      : "cuStreamWaitValue32");
        return false;
      }
    }
    return flush(msg);
  }

private:
  static bool overlap(uintptr_t a, size_t n, uintptr_t b, size_t m) {
    return a < b + m && b < a + n;
  }
  // Copies of one batch run in any order: a copy that reads or writes what
  // a pending one writes, or writes what it reads, starts a new batch.
  bool overlapsPending(const sched::Op &o) const {
    const uintptr_t d = (uintptr_t)o.dst, s = (uintptr_t)o.src;
    const size_t n = (size_t)o.bytes;
    for (size_t i = 0; i < dst_.size(); ++i)
      if (overlap(d, n, dst_[i], size_[i]) || overlap(s, n, dst_[i], size_[i]) ||
          overlap(d, n, src_[i], size_[i]))
        return true;
    return false;
  }
  bool flush(std::string &msg) {
    if (dst_.empty())
      return true;
    const CeDriver &d = driver();
    if (batch_ && d.memcpyBatch) {
      CUmemcpyAttributes attr = {};
      attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
      attr.flags = CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE;
      size_t idx = 0;
      CUresult r = d.memcpyBatch(dst_.data(), src_.data(), size_.data(),
                                 dst_.size(), &attr, &idx, 1, (CUstream)s_);
      if (r != CUDA_SUCCESS) {
        msg = cuError(r, "cuMemcpyBatchAsync");
        return false;
      }
    } else {
      for (size_t i = 0; i < dst_.size(); ++i) {
        cudaError_t e = cudaMemcpyAsync((void *)dst_[i], (const void *)src_[i],
                                        size_[i], cudaMemcpyDefault, s_);
        if (e != cudaSuccess) {
          msg = std::string("cudaMemcpyAsync: ") + cudaGetErrorString(e);
          return false;
        }
      }
    }
    dst_.clear();
    src_.clear();
    size_.clear();
    return true;
  }
  cudaStream_t s_;
  bool batch_;
  std::vector<CUdeviceptr> dst_, src_;
  std::vector<size_t> size_;
};

class CeDatapath final : public RuntimeTarget {
public:
  const char *name() const override { return "ce"; }

  bool hasEntry(const purlin_plan_info &p) const override {
    return p.host_entry != nullptr;
  }

  purlinStatus launch(const purlin_collective_info &info, int plan,
                      const exec::Shared &S, int first, int n, int dtype,
                      int op, void *stream, std::string &msg) const override {
    (void)dtype, (void)op; // bytes are bytes; a reduction is refused
    std::vector<sched::Schedule> schedules;
    if (!sched::record(info.plans[plan], S, first, n, schedules, msg))
      return PURLIN_ERR_UNSUPPORTED_OP;
    const CeDriver &d = driver();
    if (!d.writeValue32 || !d.waitValue32) {
      msg = "the CUDA driver lacks cuStreamWriteValue32/cuStreamWaitValue32";
      return PURLIN_ERR_CUDA;
    }
    cudaStream_t user = (cudaStream_t)stream;
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(user, &cs) != cudaSuccess)
      cudaGetLastError();
    const bool batch = batchAllowed() && cs == cudaStreamCaptureStatusNone;
    std::lock_guard<std::mutex> lk(gMu);
    int dev = 0;
    cudaGetDevice(&dev);
    DeviceStreams *ds = nullptr;
    cudaError_t e = streamsOf(dev, n, ds);
    if (e == cudaSuccess)
      e = cudaEventRecord(ds->fork, user);
    for (int i = 0; i < n && e == cudaSuccess; ++i) {
      cudaStream_t s = ds->streams[(size_t)i];
      e = cudaStreamWaitEvent(s, ds->fork, 0);
      if (e != cudaSuccess)
        break;
      Player p(s, batch);
      if (!p.play(schedules[(size_t)i], msg)) {
        msg = "rank " + std::to_string(first + i) + ": " + msg;
        return PURLIN_ERR_CUDA;
      }
      e = cudaEventRecord(ds->joins[(size_t)i], s);
      if (e == cudaSuccess)
        e = cudaStreamWaitEvent(user, ds->joins[(size_t)i], 0);
    }
    if (e == cudaSuccess)
      return PURLIN_SUCCESS;
    cudaGetLastError();
    msg = cudaGetErrorString(e);
    return PURLIN_ERR_CUDA;
  }
};
} // namespace

const RuntimeTarget &datapath() {
  static const CeDatapath kCe;
  return kCe;
}

} // namespace ce
} // namespace rt
} // namespace purlin
