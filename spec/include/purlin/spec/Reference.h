// The reference evaluator: every rank's expected output computed straight
// from the naming semantics, one name at a time. It is the oracle that every
// target (host threads, GPUs) is checked against, bit for bit.
#pragma once

#include "purlin/spec/Collective.h"

#include <cstdint>
#include <string>
#include <vector>

namespace purlin {

/// Buffers of every rank: data[rank][buffer] holds
/// bufElems(buffer) * dtypeSize(dtype) bytes, buffers in the collective's
/// order. Input buffers are read; each output element named by some name is
/// overwritten with the name's value (contributions combined in ascending
/// contributor rank, DType.h); output elements named by no name keep their
/// contents. Inputs and outputs never alias here: the semantics of an
/// in-place call are those of the same call on separate buffers.
using RankBuffers = std::vector<std::vector<std::vector<uint8_t>>>;

bool referenceEvaluate(const Collective &c, const Binding &b, RankBuffers &data,
                       std::string &error);
/// The same, with every epilogue computed as the chain of separate kernels
/// it fuses (the all-reduce, then each `let`, each result stored in the
/// element type): what a fused epilogue is compared with, within a
/// tolerance (Epilogue.h).
bool referenceEvaluateUnfused(const Collective &c, const Binding &b,
                              RankBuffers &data, std::string &error);

/// Allocates data[rank][buffer] at the sizes `b` gives; inputs are filled
/// with fillRandom(seed, rank, buffer) and outputs with the poison byte.
bool allocateBuffers(const Collective &c, const Binding &b, RankBuffers &data,
                     uint64_t seed, uint8_t poison, std::string &error);

} // namespace purlin
