// purlin-snac-check: proves snac programs right by running the executor's
// code on a symbolic target (purlin/Plan, verifyPlan): no race, no
// deadlock, the postcondition, and in place; each problem at its step.
#include "purlin/Passes/Passes.h"
#include "purlin/Plan/Plan.h"

#include "purlin/Dialect/Layout/Convert.h"
#include "purlin/Dialect/Snac/Convert.h"

namespace purlin {
#define GEN_PASS_DEF_SNACCHECK
#include "purlin/Passes/Passes.h.inc"

namespace {
struct SnacCheckPass : impl::SnacCheckBase<SnacCheckPass> {
  using SnacCheckBase::SnacCheckBase;
  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](snac::ProgramOp prog) {
      auto coll = mlir::SymbolTable::lookupNearestSymbolFrom<layout::CollectiveOp>(
          prog->getParentOp(), prog.getCollectiveAttr());
      Collective c;
      Plan plan;
      llvm::SmallVector<mlir::Operation *> steps;
      if (!coll || mlir::failed(layout::exportCollective(coll, c)) ||
          mlir::failed(snac::exportPlan(prog, plan, steps))) {
        failed = true;
        return;
      }
      std::vector<PlanDiag> diags;
      if (!verifyPlan(c, plan, diags, maxRanks)) {
        for (auto &d : diags) {
          mlir::Operation *at = d.step >= 0 && d.step < (int)steps.size()
                                    ? steps[d.step]
                                    : prog.getOperation();
          at->emitError(d.message);
        }
        failed = true;
        return;
      }
      if (plan.inplaceSafe)
        prog.setInplaceSafe(true);
      else
        prog.removeInplaceSafeAttr();
      if (plan.inplaceSame && !plan.inplaceSafe)
        prog.setInplaceSame(true);
      else
        prog.removeInplaceSameAttr();
      if (plan.inplaceSafe || plan.inplaceSame)
        prog.setInplaceMaxRanks(plan.inplaceMaxRanks);
      else
        prog.removeInplaceMaxRanksAttr();
    });
    if (failed)
      signalPassFailure();
  }
};
} // namespace
} // namespace purlin
