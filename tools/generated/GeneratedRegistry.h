// The generated collectives linked into this build, by name (the list is
// written by tools/generated/CMakeLists.txt from PURLIN_GEN_DIR). For the
// GPU tests and the benchmark.
#pragma once

#include "purlin/spec/Entry.h"

namespace purlin {
namespace rt {
struct GeneratedCollective {
  const char *name;
  const purlin_collective_info *(*info)(void);
};
const GeneratedCollective *generatedCollectives(int *n);
} // namespace rt
} // namespace purlin
