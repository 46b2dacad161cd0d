// First-use compilation on the SM datapath (Jit.h): the program, NVRTC, the
// caches, loading.
#include "Jit.h"

#include "DiskCache.h"
#include "JitHeaders.h"
#include "purlin/spec/Numbering.h"
#include "purlin/spec/Target.h"

#include <cuda_runtime.h>
#include <nvrtc.h>

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>

namespace purlin {
namespace rt {
namespace sm {

namespace {
/// The C headers the atoms include, for NVRTC (which has no C library).
const char kStdint[] = R"(#pragma once
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef long long intptr_t;
typedef unsigned long long uintptr_t;
#define INT64_MAX 0x7fffffffffffffffLL
#define UINT64_MAX 0xffffffffffffffffULL
)";

/// The CUDA headers' folder (cuda_fp16.h, ...): PURLIN_CUDA_INCLUDE, else
/// $CUDA_HOME/include, $CUDA_PATH/include, the toolkit the runtime was
/// built with, /usr/local/cuda/include; "" when none has them.
std::string cudaIncludeDir() {
  std::vector<std::string> cands;
  if (const char *e = std::getenv("PURLIN_CUDA_INCLUDE"))
    cands.push_back(e);
  for (const char *v : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *e = std::getenv(v))
      cands.push_back(std::string(e) + "/include");
#ifdef PURLIN_CUDA_INCLUDE_DIR
  cands.push_back(PURLIN_CUDA_INCLUDE_DIR);
#endif
  cands.push_back("/usr/local/cuda/include");
  for (const std::string &d : cands) {
    struct stat st;
    if (stat((d + "/cuda_fp16.h").c_str(), &st) == 0)
      return d;
  }
  return "";
}

/// Copy-only collectives have no op bit but copy: their kernels depend on
/// the element's size alone, so every type of a size shares one program.
int canonicalType(const purlin_collective_info &info, int dtype) {
  static const int kBytes[] = {
#define PURLIN_X(E, name, bytes) bytes,
      PURLIN_DTYPES(PURLIN_X)
#undef PURLIN_X
  };
  if (info.aot_ops != 1u)
    return dtype;
  for (int t = 0; t < dtype; ++t)
    if (kBytes[t] == kBytes[dtype])
      return t;
  return dtype;
}

/// NVRTC's options; PURLIN_JIT_OPTIONS adds its words (e.g. an atom's
/// compile-time knob for a test: -DPURLIN_TMA_MIN_BYTES=1024), which the
/// disk cache's key covers like the others.
std::vector<std::string> nvrtcOptions(int arch, const std::string &inc) {
  std::vector<std::string> o = {"-std=c++17", "-default-device", "-DNDEBUG",
                                "--gpu-architecture=sm_" + std::to_string(arch),
                                "-I" + inc};
  if (const char *e = std::getenv("PURLIN_JIT_OPTIONS")) {
    std::string w;
    for (const char *c = e;; ++c) {
      if (*c && *c != ' ' && *c != '\t') {
        w += *c;
        continue;
      }
      if (!w.empty())
        o.push_back(w);
      w.clear();
      if (!*c)
        break;
    }
  }
  return o;
}

/// Compiles `text` with NVRTC; `code` is PTX or a cubin.
bool runNvrtc(const std::string &text, const std::vector<std::string> &opts,
              bool cubin, std::string &code, std::string &error) {
  int n = 0;
  const JitHeader *hs = jitHeaders(&n);
  std::vector<const char *> names = {"stdint.h"}, texts = {kStdint};
  for (int i = 0; i < n; ++i) {
    names.push_back(hs[i].name);
    texts.push_back(hs[i].text);
  }
  nvrtcProgram prog;
  nvrtcResult r =
      nvrtcCreateProgram(&prog, text.c_str(), "purlin_jit.cu",
                         (int)names.size(), texts.data(), names.data());
  if (r != NVRTC_SUCCESS) {
    error = std::string("nvrtcCreateProgram: ") + nvrtcGetErrorString(r);
    return false;
  }
  std::vector<const char *> o;
  for (const std::string &s : opts)
    o.push_back(s.c_str());
  r = nvrtcCompileProgram(prog, (int)o.size(), o.data());
  size_t logSize = 0;
  nvrtcGetProgramLogSize(prog, &logSize);
  std::string log(logSize, '\0');
  if (logSize)
    nvrtcGetProgramLog(prog, &log[0]);
  if (r != NVRTC_SUCCESS) {
    error = std::string("NVRTC: ") + nvrtcGetErrorString(r) + "\n" + log;
    nvrtcDestroyProgram(&prog);
    return false;
  }
  size_t size = 0;
  r = cubin ? nvrtcGetCUBINSize(prog, &size) : nvrtcGetPTXSize(prog, &size);
  code.assign(size, '\0');
  if (r == NVRTC_SUCCESS)
    r = cubin ? nvrtcGetCUBIN(prog, &code[0]) : nvrtcGetPTX(prog, &code[0]);
  nvrtcDestroyProgram(&prog);
  if (r != NVRTC_SUCCESS || code.empty()) {
    error = std::string("NVRTC: no code: ") + nvrtcGetErrorString(r);
    return false;
  }
  return true;
}

/// What the disk cache's key covers besides the program: NVRTC's version
/// and options, every header NVRTC was given.
std::string keyText(const std::string &text,
                    const std::vector<std::string> &opts) {
  int major = 0, minor = 0, n = 0;
  nvrtcVersion(&major, &minor);
  std::string k =
      "nvrtc " + std::to_string(major) + "." + std::to_string(minor);
  for (const std::string &o : opts)
    k += " " + o;
  k += "\n" + text;
  const JitHeader *hs = jitHeaders(&n);
  for (int i = 0; i < n; ++i)
    k += std::string("\n--- ") + hs[i].name + "\n" + hs[i].text;
  return k;
}

/// Loads a cubin and finds plan `plan`'s kernel of the kind it was built
/// for in it (the other kind's kernel is an empty body there: never taken).
bool load(int plan, bool slot, const std::string &cubin, JitKernel &k,
          std::string &error) {
  cudaLibrary_t lib;
  cudaError_t e = cudaLibraryLoadData(&lib, cubin.data(), nullptr, nullptr, 0,
                                      nullptr, nullptr, 0);
  cudaKernel_t kern;
  const std::string name =
      (slot ? "purlin_jit_slot_p" : "purlin_jit_p") + std::to_string(plan);
  if (e == cudaSuccess)
    e = cudaLibraryGetKernel(&kern, lib, name.c_str());
  cudaFuncAttributes attr;
  if (e == cudaSuccess)
    e = cudaFuncGetAttributes(&attr, (const void *)kern);
  // Whether the plan waits inside a launch: the size of the program's
  // purlin_jit_inner_syncs_pN (2 bytes: it does; 1: it does not; target.cuh),
  // so nothing is copied from the device. Kept true where it is missing.
  bool inner = true;
  if (e == cudaSuccess) {
    const std::string innerName = "purlin_jit_inner_syncs_p" + std::to_string(plan);
    void *ptr = nullptr;
    size_t size = 0;
    if (cudaLibraryGetGlobal(&ptr, &size, lib, innerName.c_str()) == cudaSuccess)
      inner = size != 1;
    cudaGetLastError(); // a program without it: not an error
  }
  if (e == cudaSuccess) {
    (slot ? k.slotFn : k.fn) = (const void *)kern;
    k.threads = attr.maxThreadsPerBlock;
    k.innerSyncs = inner;
  }
  if (e != cudaSuccess) {
    cudaGetLastError();
    error =
        std::string("loading the compiled kernels: ") + cudaGetErrorString(e);
    return false;
  }
  return true; // the library stays loaded for the process
}

struct Entry {
  std::once_flag once;
  JitKernel kernel;
  std::atomic<bool> ok{false}; // set last, once the kernel is whole
  std::string error;
};
std::mutex gMutex;
std::map<std::tuple<const purlin_collective_info *, int, int, int, bool>,
         std::unique_ptr<Entry>>
    gEntries;

Entry &entryFor(const purlin_collective_info &info, int dtype, int op,
                int plan, bool slot) {
  std::lock_guard<std::mutex> lock(gMutex);
  auto &e = gEntries[{&info, canonicalType(info, dtype), op, plan, slot}];
  if (!e)
    e = std::make_unique<Entry>();
  return *e;
}

void build(const purlin_collective_info &info, int dtype, int op, int plan,
           bool slot, Entry &out) {
  int arch = 0;
  if (!deviceArch(arch, out.error))
    return;
  const std::string text =
      programText(info, dtype, op, out.error, plan, slot ? 2 : 1);
  if (text.empty())
    return;
  const std::string inc = cudaIncludeDir();
  if (inc.empty()) {
    out.error = "the CUDA headers (cuda_fp16.h) were not found: set "
                "PURLIN_CUDA_INCLUDE or CUDA_HOME";
    return;
  }
  const std::vector<std::string> opts = nvrtcOptions(arch, inc);
  const std::string file = std::string(info.name) + "-" +
                           std::to_string(dtype) + "-" + std::to_string(op) +
                           "-p" + std::to_string(plan) + (slot ? "-slot" : "") + "-sm" +
                           std::to_string(arch) + "-" +
                           contentHash(keyText(text, opts)) + ".cubin";
  std::string cubin, loadError;
  auto fromCache = [&] {
    out.kernel = JitKernel();
    return cacheRead(file, cubin) && load(plan, slot, cubin, out.kernel, loadError);
  };
  if (fromCache()) {
    out.ok.store(true);
    return;
  }
  // Another process compiling the same program (the processes of a job
  // start together, one a GPU): wait for it and load its cubin instead of
  // compiling it again, 8 NVRTC runs at once on the same cores.
  CacheLock lock(file);
  if (lock.held() && fromCache()) {
    out.ok.store(true);
    return;
  }
  out.kernel = JitKernel();
  if (!runNvrtc(text, opts, true, cubin, out.error) ||
      !load(plan, slot, cubin, out.kernel, out.error))
    return;
  cacheWrite(file, cubin); // best effort: a read-only cache still runs
  out.ok.store(true);
}
} // namespace

bool deviceArch(int &arch, std::string &error) {
  int dev = 0, major = 0, minor = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  if (e != cudaSuccess) {
    cudaGetLastError();
    error = std::string("the current GPU: ") + cudaGetErrorString(e);
    return false;
  }
  arch = major * 10 + minor;
  return true;
}

std::string programText(const purlin_collective_info &info, int dtype, int op,
                        std::string &error, int plan, int kernels) {
  const TargetInfo *row = info.target ? findTarget(info.target) : nullptr;
  if (!row || !info.source) {
    error = std::string("collective '") + info.name +
            "' carries no code to compile (a target row, its source)";
    return "";
  }
  dtype = canonicalType(info, dtype);
  return "// " + std::string(info.name) + " for element type " +
         std::to_string(dtype) + ", op " + std::to_string(op) +
         ", compiled at first use by the purlin runtime.\n"
         "#define PURLIN_JIT_DTYPE " +
         std::to_string(dtype) + "\n" +
         (plan >= 0 ? "#define PURLIN_JIT_PLAN \"p" + std::to_string(plan) +
                          "\"\n"
                    : std::string()) +
         (kernels != 3 ? "#define PURLIN_JIT_KERNELS " + std::to_string(kernels) + "\n"
                       : std::string()) +
         "#include \"purlin/spec/Exec.h\"\n#include \"purlin/spec/Entry.h\"\n"
         "#include \"" +
         row->header +
         "\"\n"
         "namespace purlin_gen_" +
         info.name +
         " {\nusing namespace purlin::exec;\n"
         "constexpr uint32_t kAotDtypes = 1u << " +
         std::to_string(dtype) + ", kAotOps = 1u << " + std::to_string(op) +
         ";\n" + info.source + "} // namespace purlin_gen_" + info.name + "\n";
}

bool compileProgram(const purlin_collective_info &info, int dtype, int op,
                    int arch, bool cubin, std::string &code,
                    std::string &error, int plan, int kernels) {
  const std::string text = programText(info, dtype, op, error, plan, kernels);
  const std::string inc = cudaIncludeDir();
  if (inc.empty() && !text.empty())
    error = "the CUDA headers (cuda_fp16.h) were not found";
  return !text.empty() && !inc.empty() &&
         runNvrtc(text, nvrtcOptions(arch, inc), cubin, code, error);
}

const JitKernel *findJit(const purlin_collective_info &info, int dtype, int op,
                         int plan, bool slot) {
  std::lock_guard<std::mutex> lock(gMutex);
  auto it = gEntries.find({&info, canonicalType(info, dtype), op, plan, slot});
  return it != gEntries.end() && it->second->ok.load() ? &it->second->kernel
                                                       : nullptr;
}

bool getJit(const purlin_collective_info &info, int dtype, int op, int plan,
            const JitKernel *&out, std::string &error, bool slot) {
  Entry &e = entryFor(info, dtype, op, plan, slot);
  std::call_once(e.once, [&] { build(info, dtype, op, plan, slot, e); });
  if (!e.ok) {
    error = e.error;
    return false;
  }
  out = &e.kernel;
  return true;
}

bool getJitAll(const purlin_collective_info &info, int dtype, int op,
               std::string &error) {
  // Kernel i: plan i / 2, the slot kind when i is odd.
  const int n = 2 * info.nplans;
  std::vector<std::string> errors(n);
  std::vector<char> ok(n, 0);
  int dev = 0;
  cudaGetDevice(&dev);
  auto one = [&](int i) {
    cudaSetDevice(dev); // the caller's GPU, for the architecture and loading
    const JitKernel *k = nullptr;
    ok[i] = getJit(info, dtype, op, i / 2, k, errors[i], i % 2 != 0);
  };
  std::vector<std::thread> threads;
  for (int i = 1; i < n; ++i)
    if (!findJit(info, dtype, op, i / 2, i % 2 != 0))
      threads.emplace_back(one, i);
  if (n > 0)
    one(0);
  for (std::thread &t : threads)
    t.join();
  for (int i = 0; i < n; ++i)
    if (!ok[i] && !findJit(info, dtype, op, i / 2, i % 2 != 0)) {
      error = "plan " + std::to_string(i / 2) + (i % 2 ? " (slot kernel)" : "") +
              ": " + errors[i];
      return false;
    }
  return true;
}

} // namespace sm
} // namespace rt
} // namespace purlin
