// purlin-source-compile: the GPU side of the Python package without a GPU.
// Loads a collective's host build (a shared library exporting
// purlin_collective_NAME, as purlin.compile builds it), makes the
// collective of purlinCollectiveFromSource with the plans' code of a file
// (plans.cu.txt), and compiles its first-use program through NVRTC for one
// element type and op into PTX for sm_90; prints the kernels found.
//   purlin-source-compile LIB NAME PLANS_TXT DTYPE OP
#include "purlin/collective_source.h"
#include "purlin/spec/DType.h"
#include "sm/Jit.h"

#include <cstdio>
#include <dlfcn.h>
#include <fstream>
#include <sstream>
#include <string>

int main(int argc, char **argv) {
  if (argc != 6) {
    std::fprintf(stderr,
                 "usage: purlin-source-compile LIB NAME PLANS_TXT DTYPE OP\n");
    return 2;
  }
  void *so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!so) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 2;
  }
  using Getter = const purlin_collective_info *(*)();
  auto get = (Getter)dlsym(so, (std::string("purlin_collective_") + argv[2]).c_str());
  std::ifstream in(argv[3]);
  std::stringstream text;
  text << in.rdbuf();
  purlin::DType t;
  purlin::RedOp op;
  if (!get || !in || !purlin::parseDType(argv[4], t) ||
      !purlin::parseRedOp(argv[5], op)) {
    std::fprintf(stderr, "purlin-source-compile: bad arguments\n");
    return 2;
  }
  const purlin_collective_info *info = nullptr;
  if (purlinCollectiveFromSource(get(), "sm_90", text.str().c_str(), &info)) {
    std::printf("FAIL: %s\n", purlinGetLastError());
    return 1;
  }
  std::printf("%s for %s: %d plans, kernels linked in: %s\n", info->name,
              info->target, info->nplans, info->aot_dtypes ? "some" : "none");
  std::string code, error;
  if (!purlin::rt::sm::compileProgram(*info, (int)t, (int)op, 90, false, code,
                                      error)) {
    std::printf("FAIL: %s\n", error.c_str());
    return 1;
  }
  for (int p = 0; p < info->nplans; ++p) {
    const std::string k = "purlin_jit_p" + std::to_string(p);
    std::printf("kernel %s (%s): %s\n", k.c_str(), info->plans[p].strategy,
                code.find(k) != std::string::npos ? "found" : "MISSING");
  }
  purlinCollectiveFree(info);
  return 0;
}
