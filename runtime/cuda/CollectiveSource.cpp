// purlinCollectiveFromSource (purlin/collective_source.h): a collective
// whose kernels are all compiled at first use, from a plan table compiled
// for another target and the plans' code as text.
#include "Internal.h"
#include "purlin/collective_source.h"
#include "purlin/spec/Target.h"

#include <cuda_runtime.h>

using namespace purlin;

namespace {
// What the info's pointers point into.
struct SourceCollective {
  purlin_collective_info info{};
  std::string name, desc, target, source;
  std::vector<std::string> strategies;
  std::vector<purlin_plan_info> plans;
};

// The entry of a plan with no kernel linked in: never called, as no pair
// is (aot_dtypes is 0); the datapath launches the compiled kernels.
int noLinkedKernel(const purlin_shared_t *, int, int, int, int, void *,
                   const void *) {
  return (int)cudaErrorInvalidDeviceFunction;
}
} // namespace

extern "C" {

purlinStatus purlinCollectiveFromSource(const purlin_collective_info *plans,
                                        const char *target, const char *source,
                                        const purlin_collective_info **out) {
  if (!plans || !target || !source || !out)
    return rt::fail(PURLIN_ERR_INVALID_ARGUMENT, "null argument");
  const TargetInfo *row = findTarget(target);
  if (!row || std::string(row->ext) != "cu")
    return rt::fail(PURLIN_ERR_BAD_COLLECTIVE,
                    std::string("'") + target + "' is not a GPU target (" +
                        targetNames() + ")");
  Collective c;
  std::string err;
  if (!readDesc(plans->desc, c, err))
    return rt::fail(PURLIN_ERR_BAD_COLLECTIVE, "bad description: " + err);
  auto s = std::make_unique<SourceCollective>();
  s->name = plans->name;
  s->desc = plans->desc;
  s->target = target;
  s->source = source;
  s->strategies.reserve(plans->nplans);
  for (int i = 0; i < plans->nplans; ++i) {
    s->strategies.push_back(plans->plans[i].strategy);
    purlin_plan_info p = plans->plans[i];
    p.strategy = s->strategies.back().c_str();
    p.host_entry = nullptr;
    p.cuda_entry = noLinkedKernel;
    s->plans.push_back(p);
  }
  // A copy-only collective's kernels depend on the element's size alone:
  // its op set is {copy}, as purlinc's kAotOps says (the first-use compiler
  // shares one program among the types of a size).
  bool copyOnly = true;
  for (const Clause &cl : c.clauses)
    copyOnly = copyOnly && cl.op == RedOp::Copy && cl.opParam.empty();
  s->info = {s->name.c_str(), s->desc.c_str(),      s->target.c_str(),
             (int)s->plans.size(), s->plans.data(), 0u,
             copyOnly ? 1u : 0u,   s->source.c_str()};
  *out = &s.release()->info;
  return rt::ok();
}

purlinStatus purlinCollectiveFree(const purlin_collective_info *info) {
  // info is the first member of its SourceCollective.
  delete reinterpret_cast<const SourceCollective *>(info);
  return rt::ok();
}

} // extern "C"
