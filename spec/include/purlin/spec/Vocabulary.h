// The vocabulary of SNAC programs, defined once: the step kinds and their
// operands that the snac dialect prints, inference builds, the checker
// simulates, codegen emits and the executor (Exec.h) runs, and the limits
// every layer shares. Plain C++ that host compilers and nvcc both take.
//
// The executor's int constants (exec::kPeersSrcs, ...) are defined from
// these enums; the snac dialect's ODS enums are tied to them by
// static_asserts (dialects/Snac); names for text forms are in Plan.h.
#pragma once

namespace purlin {

// Limits and capacities, in one place.
namespace limits {
constexpr int kMaxRanks = 32;       // ranks of a communicator
constexpr int kMaxBuffers = 8;      // buffers of a collective, inputs and outputs
constexpr int kMaxClauses = 4;      // clauses of a collective
constexpr int kMaxScalars = 12;     // ranks, counts and roots
constexpr int kMaxTables = 3;       // table parameters
constexpr int kMaxTableDims = 3;    // extents of one table
constexpr int kMaxTableWords = 96;  // table entries in all
constexpr int kMaxDims = 6;         // coordinates of a clause
constexpr int kMaxSignals = 8;      // signal names of a plan
constexpr int kRegPtrs = 8;         // pointers of a register move (moveVec)
} // namespace limits

/// How a clause picks the ranks of a name's contributors or destinations:
/// every rank, the rank given by one coordinate ranging over the ranks, an
/// expression of parameters, a map of the coordinates (an expression that
/// mentions them), or a set (a map of the coordinates and a bound variable
/// over its extent) (Collective.h RankRole).
enum class RoleKind : int { Every = 0, Coord = 1, Fixed = 2, Map = 3, Set = 4 };

enum class StepKind : int { Stage = 0, Notify = 1, Wait = 2, Consume = 3 };
/// stage: expose (inputs are read in place by peers: no data moves), copy
/// (this rank copies its input into its own peer-visible scratch), push
/// (this rank writes its contributions into each destination's staging).
enum class StageMode : int { Expose = 0, Copy = 1, Push = 2 };
/// Peers of rank r that a notify or wait addresses: every rank, the ranks
/// whose names r receives (srcs), the ranks that receive r's names (dsts),
/// the ranks that share a group of names with r (group: its contributors,
/// destinations and owners; every rank unless a rank selector is a set),
/// r alone (self: with all lanes, a barrier of r's lanes).
enum class PeerSet : int { All = 0, Srcs = 1, Dsts = 2, Group = 3, Self = 4 };
/// consume: the names r receives (mine), or part r of all names (owned).
enum class Selection : int { Mine = 0, Owned = 1 };
/// consume reads: contributors' inputs, their scratch copies, this rank's
/// staging slots, this rank's partial result then inputs (a fold
/// continued), the parts of its names from their owners' outputs, or the
/// received values a consume `to received` left in this rank's area (an
/// epilogue applied apart from the combine: the unfused plans).
enum class SourceKind : int {
  Input = 0,
  Scratch = 1,
  Staging = 2,
  Partial = 3,
  Output = 4,
  Received = 5
};
/// consume writes: this rank's output (owned: the owner keeps its part),
/// every destination, this rank's partial result, or the received values
/// (f32, not rounded) into the received area of each destination (mine:
/// this rank's; owned: every rank's), for a later consume `from received`
/// through the clause's epilogue.
enum class DestKind : int { Self = 0, All = 1, Partial = 2, Received = 3 };

/// Step flags as the executor takes them (one int per call).
/// notify / wait: kAllLanes (wait for every lane of each peer), kBoundary
/// (only orders against the launch boundary: skipped when every rank runs
/// in one launch). stage push / consume from staging: kFlagged, the
/// low-latency protocol (every staged line carries the launch's flag).
enum StepFlags : int { kAllLanes = 1, kBoundary = 2, kFlagged = 4 };

} // namespace purlin
