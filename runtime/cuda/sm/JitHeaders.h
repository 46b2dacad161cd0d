// The headers a first-use compile includes (Jit.h), embedded in the runtime
// when it is built, so that it needs no source tree at run time: the
// executor's (spec/include/purlin/spec: Exec.h, Entry.h, Numbering.h,
// Vocabulary.h) and the SM atoms (atom-kernels/common/sm and every GPU
// row's header of the target table). JitHeaders.cpp is written by
// runtime/cuda/CMakeLists.txt.
#pragma once

namespace purlin {
namespace rt {
namespace sm {

struct JitHeader {
  const char *name; // as the sources include it: "purlin/spec/Exec.h"
  const char *text;
};

const JitHeader *jitHeaders(int *n);

} // namespace sm
} // namespace rt
} // namespace purlin
