// The values a collective was compiled with, which every launch must match:
// parameters bound at compile time (purlinc --ranks, --count, --root,
// --dtype, --op, -D NAME=V: Param::bound in its description) and a concrete
// element type in the source (`in x: i32[C]`). The host runner and the CUDA
// runtime both check a launch against them, with one status and message
// per kind of value (purlin/purlin.h):
//
//   rank count    PURLIN_ERR_BAD_RANK_COUNT    (at purlinCollCreate)
//   element type  PURLIN_ERR_UNSUPPORTED_TYPE
//   op            PURLIN_ERR_UNSUPPORTED_OP
//   count, root   PURLIN_ERR_PARAM_RANGE
//   table         PURLIN_ERR_PARAM_RANGE
//
// each message naming the bound value. MLIR-free, CUDA-free.
#pragma once

#include "purlin/purlin.h"
#include "purlin/spec/Collective.h"

#include <map>
#include <string>

namespace purlin {
namespace rt {

class BoundValues {
public:
  /// Reads them from the collective's description.
  bool init(const Collective &c, std::string &error);

  /// The bound rank count, element type and op; -1 where free. The type
  /// is bound by a `type` parameter bound at compile time or by a buffer
  /// of a concrete type; the op by an op parameter bound at compile time.
  int ranks() const { return ranks_; }
  int dtype() const { return dtype_; }
  int op() const { return op_; }
  /// The value of scalar parameter `name` (a count or root) bound at
  /// compile time, or -1.
  int64_t scalar(const std::string &name) const;

  /// PURLIN_SUCCESS, or the status above with `msg` naming the bound value.
  purlinStatus checkRanks(int R, std::string &msg) const;
  purlinStatus checkType(int dtype, std::string &msg) const;
  purlinStatus checkOp(int op, std::string &msg) const;
  purlinStatus checkScalar(const std::string &name, int64_t v,
                           std::string &msg) const;
  /// Every value of a binding (the host runner's): R, the type, the op of
  /// an op parameter, the counts and roots, the tables. A bound parameter
  /// the binding leaves out is no mismatch.
  purlinStatus check(const Collective &c, const Binding &b,
                     std::string &msg) const;

private:
  std::string name_; // the collective's
  int ranks_ = -1, dtype_ = -1, op_ = -1;
  std::string typeWhy_; // "T bound at compile time", "buffer 'x' is i32[C]"
  std::string ranksParam_, opParam_;
  std::map<std::string, int64_t> scalars_;
  std::map<std::string, std::vector<int64_t>> tables_;
};

} // namespace rt
} // namespace purlin
