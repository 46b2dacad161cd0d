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
/// epilogue applied apart from the combine: the unfused plans), or those
/// the rows' owners left in theirs (`owned ... to received`: each row read
/// from its owner's area, the gathered apply of two_shot_gather).
enum class SourceKind : int {
  Input = 0,
  Scratch = 1,
  Staging = 2,
  Partial = 3,
  Output = 4,
  Received = 5,
  Owners = 6
};
/// consume writes: this rank's output (owned: the owner keeps its part),
/// every destination, this rank's partial result, or the received values
/// (f32, not rounded) into the received area of each destination (mine:
/// this rank's; owned: every rank's), for a later consume `from received`
/// through the clause's epilogue.
enum class DestKind : int { Self = 0, All = 1, Partial = 2, Received = 3 };

/// The line format of a flagged push and its consume (the low-latency
/// protocol: every staged line carries the launch's flag, so the consume
/// polls the lines and needs no separate notify and wait; exec/Lines.h has
/// the geometry):
///  LL:    16-byte lines of 8 data bytes and the flag twice, one 16-byte
///         store each (staged_ll);
///  LL128: 128-byte lines of 120 data bytes and an 8-byte flag word, the
///         flag stored after the line's data with release semantics and
///         polled with acquire (staged_ll128).
/// None: not flagged.
enum class LineFormat : int { None = 0, LL = 1, LL128 = 2 };

/// Step flags as the executor takes them (one int per call).
/// notify / wait: kAllLanes (wait for every lane of each peer), kBoundary
/// (only orders against the launch boundary: skipped when every rank runs
/// in one launch). stage push / consume from staging: the step's line
/// format in bits 2-3 (lineFlags): kFlagged (LL lines), kFlagged128
/// (LL128 lines); at most one of them. kParity (with a line format): the
/// clause's staging slots are doubled and launch e uses half e & 1
/// (staging by launch parity; exec::stagingHalf), so that a writer's next
/// launch never writes the half a reader may still poll in this one.
enum StepFlags : int {
  kAllLanes = 1,
  kBoundary = 2,
  kFlagged = (int)LineFormat::LL << 2,
  kFlagged128 = (int)LineFormat::LL128 << 2,
  kLineFlags = 3 << 2,
  kParity = 1 << 4
};
/// The step flag of a line format, and the line format of step flags.
constexpr int lineFlags(LineFormat f) { return (int)f << 2; }
constexpr LineFormat lineFormatOf(int flags) {
  return (LineFormat)((flags & kLineFlags) >> 2);
}

} // namespace purlin
