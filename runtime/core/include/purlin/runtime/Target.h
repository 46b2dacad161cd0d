// The runtime's target interface: what a runtime asks of the datapath that
// a collective was compiled for. A collective names its target
// (purlin_collective_info::target, a row of the target table
// purlin/spec/Targets.def); the row's DATAPATH column names the datapath
// that loads and launches its code, registered here by that name. The host
// runner registers "host" (ranks and lanes as threads), the CUDA runtime
// "sm" (kernels of the SM atoms, every GPU generation of the table).
//
// A new datapath is its atoms (atom-kernels/<folder>), its row(s) in the
// table and one registration: a RuntimeTarget and a line in the runtime's
// list of datapaths (docs/runtime.md). Nothing of the language, SNAC or the
// runtime's core changes. MLIR-free and CUDA-free.
#pragma once

#include "purlin/purlin.h"
#include "purlin/spec/Entry.h"
#include "purlin/spec/Exec.h"

#include <cstdint>
#include <string>
#include <vector>

namespace purlin {
namespace rt {

/// What a communicator tells a datapath about itself when a collective's
/// signal memory is set up.
struct CommInfo {
  uint64_t errorWord = 0; // device address of the communicator's error
                          // word (mapped host memory), 0: none
  uint64_t timeoutNs = 0; // how long a wait may take (0: the datapath's)
  bool oneDevice = false; // every rank on one device of this process
};

class RuntimeTarget {
public:
  virtual ~RuntimeTarget() = default;
  /// The datapath's name: the DATAPATH column of the rows it serves.
  virtual const char *name() const = 0;
  /// Whether plan `p` carries an entry this datapath can launch.
  virtual bool hasEntry(const purlin_plan_info &p) const = 0;
  /// The datapath's own words after the executor's in each rank's signal
  /// memory (exec::signalWords), and their values as it starts.
  virtual int auxWordCount() const { return 0; }
  virtual std::vector<uint64_t> auxWords(const CommInfo &comm) const {
    (void)comm;
    return {};
  }
  /// Words of signal memory one rank needs for plan `p` of an R-rank
  /// communicator: the executor's, then the datapath's own.
  int64_t signalWords(const purlin_plan_info &p, int R) const {
    return exec::signalWords(p.nsignals, R, p.lanes, p.chunks) + auxWordCount();
  }
  /// What a non-zero error word, written by the device, means: a status and
  /// a message.
  virtual purlinStatus deviceError(uint32_t word, std::string &msg) const {
    msg = "the device reported error " + std::to_string(word);
    return PURLIN_ERR_CUDA;
  }
  /// Whether the code for element type `dtype` and op `op` can launch
  /// without preparing it first (prepare() is then a no-op).
  virtual bool ready(const purlin_collective_info &info, int dtype,
                     int op) const {
    (void)info, (void)dtype, (void)op;
    return true;
  }
  /// Makes that code ready (a datapath that builds code at first use
  /// compiles or loads it here). Never called while a stream is captured.
  virtual purlinStatus prepare(const purlin_collective_info &info, int dtype,
                               int op, std::string &msg) const {
    (void)info, (void)dtype, (void)op, (void)msg;
    return PURLIN_SUCCESS;
  }
  /// Launches ranks [first, first + n) of plan `plan` with the launch's
  /// shared state `S` (whose op the moves read; `op` is that op) on
  /// `queue`: a cudaStream_t for GPU datapaths, the HostAtoms configuration
  /// for the host (which runs the ranks to completion).
  virtual purlinStatus launch(const purlin_collective_info &info, int plan,
                              const exec::Shared &S, int first, int n,
                              int dtype, int op, void *queue,
                              std::string &msg) const = 0;

  /// Launches whose shared state lives in device memory (a CUDA graph's
  /// launch whose buffers are registered after the capture: docs/
  /// multiprocess.md): the bytes of one slot (0: this datapath has none),
  /// a slot's image holding `S`, ready to run or not (a kernel that finds
  /// its slot not ready does nothing and reports it through the error
  /// word: deviceError gives PURLIN_ERR_NOT_REGISTERED), and the launch of
  /// plan `plan` reading slot `slot` (device memory holding such an image;
  /// `S` is what it holds).
  virtual size_t slotBytes() const { return 0; }
  virtual void slotImage(const exec::Shared &S, bool ready, void *out) const {
    (void)S, (void)ready, (void)out;
  }
  virtual purlinStatus launchSlot(const purlin_collective_info &info,
                                  int plan, const exec::Shared &S,
                                  const void *slot, int first, int n,
                                  int dtype, int op, void *queue,
                                  std::string &msg) const {
    (void)info, (void)plan, (void)S, (void)slot, (void)first, (void)n;
    (void)dtype, (void)op, (void)queue;
    msg = std::string("the ") + name() +
          " datapath cannot read a launch's state from device memory";
    return PURLIN_ERR_NOT_REGISTERED;
  }
};

/// Registers `t` under its name; a later registration of a name replaces
/// the earlier one. Each runtime registers the datapaths it launches on
/// (runtime/cuda/Datapaths.cpp, the host runner).
void registerTarget(const RuntimeTarget &t);

/// The datapath of compiled target `target` (a row of the target table),
/// or null with a message: the target is not a row, or this runtime has no
/// datapath of that name.
const RuntimeTarget *targetFor(const char *target, std::string &error);

} // namespace rt
} // namespace purlin
