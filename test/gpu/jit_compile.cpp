// purlin-jit-compile: compiles the first-use program of a linked collective
// (runtime/cuda/sm/Jit.h: the plans' code with the embedded atoms, through
// NVRTC) for one element type and op, as PTX for sm_90 (no GPU needed),
// and prints its kernels' entry names. With --cubin, machine code as a
// first launch builds it (slower: ptxas).
//   purlin-jit-compile NAME DTYPE OP [--cubin]
#include "GeneratedRegistry.h"
#include "purlin/spec/DType.h"
#include "sm/Jit.h"

#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: purlin-jit-compile NAME DTYPE OP [--cubin]\n");
    return 2;
  }
  purlin::DType t;
  purlin::RedOp op;
  if (!purlin::parseDType(argv[2], t) || !purlin::parseRedOp(argv[3], op)) {
    std::fprintf(stderr, "purlin-jit-compile: bad type or op\n");
    return 2;
  }
  const bool cubin = argc > 4 && std::strcmp(argv[4], "--cubin") == 0;
  int n = 0;
  const purlin::rt::GeneratedCollective *gc =
      purlin::rt::generatedCollectives(&n);
  for (int i = 0; i < n; ++i) {
    if (std::strcmp(gc[i].name, argv[1]) != 0)
      continue;
    const purlin_collective_info *info = gc[i].info();
    std::string code, error;
    if (!purlin::rt::sm::compileProgram(*info, (int)t, (int)op, 90, cubin, code,
                                        error)) {
      std::printf("FAIL: %s\n", error.c_str());
      return 1;
    }
    std::printf("%s %s %s: %zu bytes of %s\n", argv[1], argv[2], argv[3],
                code.size(), cubin ? "cubin" : "PTX");
    for (int p = 0; p < info->nplans; ++p) {
      const std::string k = "purlin_jit_p" + std::to_string(p);
      std::printf("kernel %s: %s\n", k.c_str(),
                  code.find(k) != std::string::npos ? "found" : "MISSING");
    }
    return 0;
  }
  std::fprintf(stderr, "purlin-jit-compile: no collective '%s' linked\n",
               argv[1]);
  return 2;
}
