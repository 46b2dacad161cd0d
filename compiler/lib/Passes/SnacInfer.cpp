// purlin-snac-infer: layout.collective -> snac.program (SNAC inference).
// The inference itself is plain C++ (purlin/Plan, inferPlans); this pass
// exports each collective, infers its plans and builds their programs.
#include "purlin/Passes/Passes.h"
#include "purlin/Plan/Plan.h"

#include "purlin/Dialect/Layout/Convert.h"
#include "purlin/Dialect/Snac/Convert.h"

namespace purlin {
#define GEN_PASS_DEF_SNACINFER
#include "purlin/Passes/Passes.h.inc"

namespace {
struct SnacInferPass : impl::SnacInferBase<SnacInferPass> {
  using SnacInferBase::SnacInferBase;
  void runOnOperation() override {
    mlir::ModuleOp mod = getOperation();
    llvm::SmallVector<layout::CollectiveOp> colls(mod.getOps<layout::CollectiveOp>());
    for (layout::CollectiveOp coll : colls) {
      Collective c;
      if (mlir::failed(layout::exportCollective(coll, c)))
        return signalPassFailure();
      InferOptions o;
      o.strategy = strategy;
      o.lanes = lanes;
      o.chunks = chunks;
      o.smallBytes = smallBytes;
      o.epilogueSmallBytes = epilogueSmallBytes;
      o.epilogueDirectBytes = epilogueDirectBytes;
      o.llBytes = llBytes;
      o.epilogueUnfusedBytes = epilogueUnfusedBytes;
      o.ll128Bytes = ll128Bytes;
      o.epilogueWideRows = epilogueWideRows;
      o.epilogueUnfusedRows = epilogueUnfusedRows;
      std::vector<Plan> plans;
      std::string error;
      if (!inferPlans(c, o, plans, error)) {
        coll.emitError(error);
        return signalPassFailure();
      }
      mlir::OpBuilder b(coll.getContext());
      b.setInsertionPointAfter(coll);
      for (size_t i = 0; i < plans.size(); ++i) {
        std::string name = c.name + "_" + plans[i].strategy;
        if (plans[i].maxBytes >= 0 || plans[i].minBytes > 0)
          name += "_" + std::to_string(i);
        snac::importPlan(b, coll.getLoc(), name, c.name, plans[i]);
      }
    }
  }
};
} // namespace
} // namespace purlin
