// The target table (Targets.def) as data.
#include "purlin/spec/Target.h"

namespace purlin {

const std::vector<TargetInfo> &targets() {
  static const std::vector<TargetInfo> rows = {
#define PURLIN_TARGET(NAME, HEADER, EXT, ARCH, DATAPATH)                       \
  {NAME, HEADER, EXT, ARCH, DATAPATH},
#include "purlin/spec/Targets.def"
#undef PURLIN_TARGET
  };
  return rows;
}

const TargetInfo *findTarget(const std::string &name) {
  for (const TargetInfo &t : targets())
    if (name == t.name)
      return &t;
  return nullptr;
}

std::string targetNames(bool gpuOnly) {
  std::vector<std::string> names;
  for (const TargetInfo &t : targets())
    if (!gpuOnly || t.gpu())
      names.push_back(t.name);
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i)
      s += gpuOnly && i + 1 == names.size() ? " or " : ", ";
    s += names[i];
  }
  return s;
}

} // namespace purlin
