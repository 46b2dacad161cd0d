// purlin-jit-compile: compiles the first-use program of a linked collective
// (runtime/cuda/sm/Jit.h: the plans' code with the embedded atoms, through
// NVRTC) for one element type and op, as PTX for sm_90 (no GPU needed),
// and prints its kernels' entry names. With --cubin, machine code as a
// first launch builds it (slower: ptxas). With --plan K, the program a
// first launch of plan K alone compiles (the other kernels empty). With
// --target T, against the atoms of another GPU row of the target table
// (the plans' code is the same for every GPU row: docs/generated-shape.md),
// and the CUDA runtime's datapath for it, and with --count S, how many
// times PTX instruction S appears.
//   purlin-jit-compile NAME DTYPE OP [--cubin] [--plan K] [--target T]
//                      [--count S]
#include "GeneratedRegistry.h"
#include "Internal.h"
#include "purlin/spec/DType.h"
#include "sm/Jit.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: purlin-jit-compile NAME DTYPE OP [--cubin] "
                         "[--plan K] [--kernels 1|2|3] [--target T] [--count STR] "
                         "[--out FILE]\n");
    return 2;
  }
  purlin::DType t;
  purlin::RedOp op;
  if (!purlin::parseDType(argv[2], t) || !purlin::parseRedOp(argv[3], op)) {
    std::fprintf(stderr, "purlin-jit-compile: bad type or op\n");
    return 2;
  }
  bool cubin = false;
  int plan = -1, kernels = 3;
  const char *target = nullptr, *count = nullptr, *out = nullptr;
  for (int i = 4; i < argc; ++i) {
    if (std::strcmp(argv[i], "--cubin") == 0)
      cubin = true;
    else if (std::strcmp(argv[i], "--plan") == 0 && i + 1 < argc)
      plan = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--target") == 0 && i + 1 < argc)
      target = argv[++i];
    else if (std::strcmp(argv[i], "--count") == 0 && i + 1 < argc)
      count = argv[++i];
    else if (std::strcmp(argv[i], "--kernels") == 0 && i + 1 < argc)
      kernels = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc)
      out = argv[++i];
  }
  int n = 0;
  const purlin::rt::GeneratedCollective *gc =
      purlin::rt::generatedCollectives(&n);
  for (int i = 0; i < n; ++i) {
    if (std::strcmp(gc[i].name, argv[1]) != 0)
      continue;
    const purlin_collective_info *info = gc[i].info();
    purlin_collective_info other;
    if (target) {
      other = *info;
      other.target = target;
      info = &other;
      // The CUDA runtime's datapath for that row (no GPU needed).
      std::string err;
      purlin::rt::registerDatapaths();
      const purlin::rt::RuntimeTarget *dp = purlin::rt::targetFor(target, err);
      std::printf("target %s: datapath %s\n", target,
                  dp ? dp->name() : err.c_str());
    }
    std::string code, error;
    if (!purlin::rt::sm::compileProgram(*info, (int)t, (int)op, 90, cubin, code,
                                        error, plan, kernels)) {
      std::printf("FAIL: %s\n", error.c_str());
      return 1;
    }
    std::printf("%s %s %s: %zu bytes of %s\n", argv[1], argv[2], argv[3],
                code.size(), cubin ? "cubin" : "PTX");
    if (out) { // the code itself (PTX to read, a cubin for cuobjdump)
      FILE *f = std::fopen(out, "wb");
      if (!f || std::fwrite(code.data(), 1, code.size(), f) != code.size()) {
        std::printf("FAIL: cannot write %s\n", out);
        return 1;
      }
      std::fclose(f);
    }
    if (count) {
      size_t n = 0;
      for (size_t at = code.find(count); at != std::string::npos;
           at = code.find(count, at + 1))
        ++n;
      std::printf("%s: %zu\n", count, n);
    }
    // Each plan's kernel, then its slot kernel (the shared state read from
    // device memory: CUDA graphs whose buffers are registered after capture).
    for (int p = 0; p < info->nplans; ++p)
      for (const char *kind : {"purlin_jit_p", "purlin_jit_slot_p"}) {
        const std::string k = kind + std::to_string(p);
        std::printf("kernel %s: %s\n", k.c_str(),
                    code.find(k) != std::string::npos ? "found" : "MISSING");
      }
    if (plan >= 0 && !cubin) {
      // The PTX of the other plans' kernels is an empty body: no loads or
      // stores of global memory. The wanted plan's has some, and so has its
      // slot kernel ("slot p2: built").
      for (int p = 0; p < 2 * info->nplans; ++p) {
        const std::string k = (p < info->nplans ? ".entry purlin_jit_p"
                                                : ".entry purlin_jit_slot_p") +
                              std::to_string(p % info->nplans) + "(";
        size_t at = code.find(k), end = code.find(".entry", at + 1);
        const std::string body = code.substr(at, end == std::string::npos
                                                     ? std::string::npos
                                                     : end - at);
        const bool work = body.find("ld.global") != std::string::npos ||
                          body.find("st.global") != std::string::npos ||
                          body.find("ld.relaxed") != std::string::npos;
        std::printf("%s p%d: %s\n", p < info->nplans ? "plan" : "slot",
                    p % info->nplans, work ? "built" : "empty");
      }
    }
    return 0;
  }
  std::fprintf(stderr, "purlin-jit-compile: no collective '%s' linked\n",
               argv[1]);
  return 2;
}
