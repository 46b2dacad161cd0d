// purlin-mp-test's case `sizes`: calls of other sizes back to back on one
// instance, each rank a process whose stream runs its launches with no
// synchronization between them, so that a rank's launch e + 1 runs while a
// peer is still in launch e (what `purlin-host-run --launch-counts
// --rank-streams` models on the host: test/Host/staged-ll-parity-sizes.test).
// The instance is created for each sequence's largest count (one scratch
// laid out at that maximum, and for a plan staged by launch parity one
// parity stride for every call); calls of count 0 among them (a parity
// plan's is not launched: emptyParityLaunch). Every launch has buffers of
// its own (purlinMemAlloc), filled before the first launch; after the last,
// each rank checks its outputs of every launch against the reference.
// Built with the staged_ll or staged_ll128 outputs (PURLIN_GEN_DIR; docs in
// mp_test.cu), it runs those plans; with the default ones, the chooser's.
#include "MpCommon.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace purlin;

namespace mptest {

int caseSizes(const Options &o, const purlinUniqueId &id, int rank) {
  const int R = o.R;
  // PURLIN_MP_TRACE=1: a line before each step that waits on the peers or
  // the GPU (seconds since the start), so that a run stopped at its time
  // limit shows where each rank was (the output is line-buffered).
  const bool tracing = std::getenv("PURLIN_MP_TRACE") != nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  auto trace = [&](const std::string &what) {
    if (tracing)
      std::printf("rank %d: %.2f s: %s\n", rank,
                  std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - t0).count(),
                  what.c_str());
  };
  trace("init");
  purlinComm_t comm;
  MP_OK(initComm(&comm, id, R, rank));
  cudaStream_t s;
  MP_CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::vector<std::vector<int64_t>> sequences = {
      {263, 1, 4099, 7, 263}, {4099, 0, 7, 0, 4099, 263}, {263, 0, 263, 0, 263}};
  if (!o.quick)
    sequences.push_back({40000, 7, 263, 40000, 1, 65539, 0, 7});
  const DType types[] = {DType::F32, DType::BF16, DType::U8};
  int passed = 0, failed = 0;
  for (const Coll &c : loadColls(o)) {
    if (c.tables)
      continue; // all_to_all_v: purlin-gpu-test covers its tables
    for (const std::vector<int64_t> &seq : sequences) {
      const int64_t maxC = *std::max_element(seq.begin(), seq.end());
      std::string seqText;
      for (int64_t n : seq)
        seqText += (seqText.empty() ? "" : ",") + std::to_string(n);
      trace("create " + c.name + " for " + seqText);
      purlinColl_t h;
      MP_OK(purlinCollCreate(&h, comm, c.info, maxParams(c, R, maxC).c_str()));
      const int nb = purlinCollBufferCount(h);
      for (DType t : types) {
        if (!c.reduces && t != DType::F32 && t != DType::U8)
          continue; // a copy collective: one type of each size tested
        const RedOp op = c.reduces ? RedOp::Sum : RedOp::Copy;
        struct Call {
          Binding b;
          std::vector<int64_t> scalars;
          RankBuffers data;
          std::vector<void *> bufs;
        };
        std::vector<Call> calls(seq.size());
        trace(std::string("alloc ") + dtypeName(t));
        std::vector<void *> mem; // purlinMemAlloc'd, every rank alike
        for (size_t i = 0; i < seq.size(); ++i) {
          Call &l = calls[i];
          bindingFor(c, R, seq[i], t, op, l.b, l.scalars);
          std::string err;
          const uint64_t seed = (uint64_t)seq[i] * 31 + (int)t * 7 + i;
          if (!allocateBuffers(c.desc, l.b, l.data, seed, 0xA5, err)) {
            std::printf("rank %d: FAIL %s: allocateBuffers: %s\n", rank,
                        c.name.c_str(), err.c_str());
            return 1;
          }
          for (int b = 0; b < nb; ++b) {
            const size_t sz = l.data[rank][b].size();
            void *p = nullptr;
            MP_OK(purlinMemAlloc(comm, sz > 16 ? sz : 16, &p));
            mem.push_back(p);
            l.bufs.push_back(p);
            if (sz)
              MP_CU(cudaMemcpy(p, l.data[rank][b].data(), sz,
                               cudaMemcpyHostToDevice));
          }
        }
        // Every launch's inputs in place (copies from pageable memory may
        // still be landing), then the launches one after the other.
        MP_CU(cudaDeviceSynchronize());
        trace("launch");
        std::string what;
        for (size_t i = 0; i < seq.size() && what.empty(); ++i) {
          Call &l = calls[i];
          void *streams[1] = {s};
          purlinArgs a = {(int)t,  (int)op, l.scalars.data(),
                          (int)l.scalars.size(), nullptr, 0,
                          l.bufs.data(), streams};
          if (purlinLaunch(h, &a) != PURLIN_SUCCESS)
            what = "launch " + std::to_string(i + 1) +
                   ": purlinLaunch: " + purlinGetLastError();
        }
        trace("synchronize");
        if (cudaStreamSynchronize(s) != cudaSuccess && what.empty())
          what = "cudaStreamSynchronize";
        if (what.empty() && purlinCommCheck(comm) != PURLIN_SUCCESS)
          what = std::string("purlinCommCheck: ") + purlinGetLastError();
        if (!what.empty()) { // the communicator is broken: stop here
          std::printf("rank %d: FAIL sizes %s %s: %s\n", rank, c.name.c_str(),
                      dtypeName(t), what.c_str());
          return 1;
        }
        for (size_t i = 0; i < seq.size(); ++i) {
          Call &l = calls[i];
          std::string err;
          if (!referenceEvaluate(c.desc, l.b, l.data, err)) {
            std::printf("rank %d: FAIL %s: reference: %s\n", rank,
                        c.name.c_str(), err.c_str());
            return 1;
          }
          bool same = true;
          for (int b = 0; b < nb && same; ++b) {
            if (c.desc.buffers[b].role != BufferRole::Out)
              continue;
            std::vector<uint8_t> got(l.data[rank][b].size());
            if (got.size())
              MP_CU(cudaMemcpy(got.data(), l.bufs[b], got.size(),
                               cudaMemcpyDeviceToHost));
            if (got != l.data[rank][b]) {
              size_t j = 0;
              while (got[j] == l.data[rank][b][j])
                ++j;
              if (failed < 20)
                std::printf("rank %d: FAIL sizes %s %s [%s] launch %zu "
                            "(count %lld of", rank, c.name.c_str(),
                            dtypeName(t), purlinCollLastPlan(h), i + 1,
                            (long long)seq[i]);
              for (size_t k = 0; k < seq.size() && failed < 20; ++k)
                std::printf("%s%lld", k ? "," : " ", (long long)seq[k]);
              if (failed < 20)
                std::printf("): buffer %s byte %zu differs\n",
                            c.desc.buffers[b].name.c_str(), j);
              same = false;
            }
          }
          same ? ++passed : ++failed;
        }
        trace("free");
        for (void *p : mem)
          MP_OK(purlinMemFree(comm, p));
      }
      trace("destroy");
      MP_OK(purlinCollDestroy(h));
    }
  }
  trace("comm check and destroy");
  MP_OK(purlinCommCheck(comm));
  MP_OK(purlinCommDestroy(comm));
  std::printf("rank %d: sizes: %d passed, %d failed\n", rank, passed, failed);
  return failed ? 1 : 0;
}

} // namespace mptest
