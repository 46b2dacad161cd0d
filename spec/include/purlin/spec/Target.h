// The targets purlinc generates code for: the rows of Targets.def, the one
// table every tool and message reads.
#pragma once

#include <string>
#include <vector>

namespace purlin {

struct TargetInfo {
  const char *name;   // --target value, PURLIN_TARGET_NAME of the atoms
  const char *header; // the atoms' header, under atom-kernels/
  const char *ext;    // the generated source's file type: "cpp" or "cu"
  int arch;           // CUDA architecture (90 for sm_90); 0: the host
  const char *datapath; // the runtime's datapath that launches its code
  bool gpu() const { return arch != 0; }
};

/// Every row of Targets.def, in table order.
const std::vector<TargetInfo> &targets();

/// The row named `name`, or null.
const TargetInfo *findTarget(const std::string &name);

/// The names, for messages and help: "host, sm_80, sm_90, sm_100"; with
/// `gpuOnly`, the GPU rows joined as a list in prose ("sm_80, sm_90 or
/// sm_100").
std::string targetNames(bool gpuOnly = false);

} // namespace purlin
