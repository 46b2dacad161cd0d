// The datapaths the CUDA runtime launches on: one registration each. A
// collective's target (a row of purlin/spec/Targets.def) names its datapath
// in the row's DATAPATH column; purlinCollCreate looks it up
// (purlin/runtime/Target.h). A new datapath adds its folder beside sm/ and
// one line here.
#include "Internal.h"
#include "ce/CeDatapath.h"
#include "sm/SmDatapath.h"
#include "tma/TmaDatapath.h"

void purlin::rt::registerDatapaths() {
  static const bool once = [] {
    registerTarget(sm::datapath());
    registerTarget(ce::datapath());
    registerTarget(tma::datapath());
    return true;
  }();
  (void)once;
}
