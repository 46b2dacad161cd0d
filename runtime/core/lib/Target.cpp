// The registry of datapaths, looked up through the target table.
#include "purlin/runtime/Target.h"

#include "purlin/spec/Target.h"

#include <cstring>
#include <mutex>

namespace purlin {
namespace rt {

namespace {
std::mutex gMutex;
std::vector<const RuntimeTarget *> &registry() {
  static std::vector<const RuntimeTarget *> all;
  return all;
}
} // namespace

void registerTarget(const RuntimeTarget &t) {
  std::lock_guard<std::mutex> lock(gMutex);
  for (const RuntimeTarget *&x : registry())
    if (std::strcmp(x->name(), t.name()) == 0) {
      x = &t;
      return;
    }
  registry().push_back(&t);
}

const RuntimeTarget *targetFor(const char *target, std::string &error) {
  const TargetInfo *row = target ? findTarget(target) : nullptr;
  if (!row) {
    error = std::string("target '") + (target ? target : "?") +
            "' is not a row of the target table (" + targetNames() + ")";
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(gMutex);
  std::string have;
  for (const RuntimeTarget *x : registry()) {
    if (std::strcmp(x->name(), row->datapath) == 0)
      return x;
    have += std::string(have.empty() ? "" : ", ") + x->name();
  }
  error = std::string("target '") + target + "' runs on the '" + row->datapath +
          "' datapath, which this runtime does not have (" +
          (have.empty() ? "none" : have) + ")";
  return nullptr;
}

} // namespace rt
} // namespace purlin
