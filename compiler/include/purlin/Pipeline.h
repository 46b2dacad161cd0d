// The compiler as a library: the source stages (read, parse, bind, verify a
// `.purlin` file; Source.cpp) and the IR stages (import into the layout
// dialect, the pass pipeline, printing a stage; Pipeline.cpp). purlinc is a
// thin CLI over this file; purlin-opt runs the same pipeline
// (--purlin-pipeline) and the same passes one by one.
//
// Adding a stage to print (--emit=NAME): an EmitKind, its name in
// parseEmitKind/emitKindNames, and its case in compile().
#pragma once

#include "purlin/Passes/Passes.h"
#include "purlin/spec/Collective.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace purlin {

//===----------------------------------------------------------------------===//
// Source stages (Source.cpp)
//===----------------------------------------------------------------------===//

/// A source file and its text, kept for printing diagnostics with the line.
struct Source {
  std::string path;
  std::string text;
};

/// Reads `path` ("-" is stdin) into `out`.
bool loadSource(const std::string &path, Source &out, std::string &error);

/// Prints `FILE:LINE:COL: SEVERITY: message`, then the source line and a
/// caret under the column (just the first line when `d.loc` has no line).
void printDiag(llvm::raw_ostream &os, const Source &src, const Diag &d,
               const char *severity = "error");

/// Parses the source into `out`. On a syntax error, prints it to `errs` and
/// returns false.
bool parseSource(const Source &src, Collective &out, llvm::raw_ostream &errs);

/// Values bound at compile time, from the command line.
struct BindOptions {
  /// NAME=VALUE pairs (`-D`), for any parameter; a table's entries are
  /// ':'-separated, row-major. Applied after the shorthands below.
  std::vector<std::string> defines;
  /// Shorthands: bind every parameter of that kind.
  std::optional<int64_t> ranks, count, root;
  std::string dtype, op;
};

/// Sets Param::bound from `opts`; checks each value's form (an integer, an
/// element type, a reduction op, table entries). Returns false and sets
/// `error` on an unknown parameter or a malformed value.
bool bindParams(Collective &c, const BindOptions &opts, std::string &error);

/// Runs the semantic checks (purlin/spec/Verify.h) and prints every problem to
/// `errs` at its source position. Returns false on an error.
bool verifySource(const Source &src, const Collective &c,
                  llvm::raw_ostream &errs);

//===----------------------------------------------------------------------===//
// The pass pipeline (Pipeline.cpp)
//===----------------------------------------------------------------------===//

/// The options of the pipeline; each defaults to its pass's own default
/// (Passes.td), so the two cannot disagree.
struct PipelineOptions : mlir::PassPipelineOptions<PipelineOptions> {
  Option<std::string> strategy{
      *this, "strategy", llvm::cl::desc("purlin-snac-infer: the strategy"),
      llvm::cl::init(SnacInferOptions().strategy)};
  Option<int> lanes{*this, "lanes",
                    llvm::cl::desc("purlin-snac-infer: lanes per rank"),
                    llvm::cl::init(SnacInferOptions().lanes)};
  Option<int> chunks{*this, "chunks",
                     llvm::cl::desc("purlin-snac-infer: pipeline chunks"),
                     llvm::cl::init(SnacInferOptions().chunks)};
  Option<int64_t> smallBytes{
      *this, "small-bytes",
      llvm::cl::desc("purlin-snac-infer: auto's one-shot band edge"),
      llvm::cl::init(SnacInferOptions().smallBytes)};
  Option<int64_t> epilogueSmallBytes{
      *this, "epilogue-small-bytes",
      llvm::cl::desc("purlin-snac-infer: auto's one-shot band edge with an epilogue"),
      llvm::cl::init(SnacInferOptions().epilogueSmallBytes)};
  Option<int64_t> epilogueDirectBytes{
      *this, "epilogue-direct-bytes",
      llvm::cl::desc("purlin-snac-infer: auto's fused one-shot band edge out "
                     "of place (-1: as epilogue-small-bytes, 512 KiB + 1 "
                     "at its default)"),
      llvm::cl::init(SnacInferOptions().epilogueDirectBytes)};
  Option<int64_t> llBytes{
      *this, "ll-bytes",
      llvm::cl::desc("purlin-snac-infer: auto's low-latency band for several "
                     "launches"),
      llvm::cl::init(SnacInferOptions().llBytes)};
  Option<int64_t> epilogueUnfusedBytes{
      *this, "epilogue-unfused-bytes",
      llvm::cl::desc("purlin-snac-infer: auto's unfused band with an epilogue"),
      llvm::cl::init(SnacInferOptions().epilogueUnfusedBytes)};
  Option<int64_t> ll128Bytes{
      *this, "ll128-bytes",
      llvm::cl::desc("purlin-snac-infer: auto's LL128 band for several "
                     "launches, from ll-bytes up to this"),
      llvm::cl::init(SnacInferOptions().ll128Bytes)};
  Option<int64_t> epilogueWideRows{
      *this, "epilogue-wide-rows",
      llvm::cl::desc("purlin-snac-infer: auto's one-shot rows for rows wider "
                     "than 8192 elements"),
      llvm::cl::init(SnacInferOptions().epilogueWideRows)};
  Option<int64_t> epilogueUnfusedRows{
      *this, "epilogue-unfused-rows",
      llvm::cl::desc("purlin-snac-infer: auto's unfused two-shot from this "
                     "many rows of 4096 to 8192 elements"),
      llvm::cl::init(SnacInferOptions().epilogueUnfusedRows)};
  Option<int> maxRanks{*this, "max-ranks",
                       llvm::cl::desc("purlin-snac-check: rank counts"),
                       llvm::cl::init(SnacCheckOptions().maxRanks)};
  Option<std::string> target{
      *this, "target", llvm::cl::desc("purlin-emit: a row of the target table"),
      llvm::cl::init(SnacEmitOptions().target)};
  Option<std::string> aot{
      *this, "aot",
      llvm::cl::desc("purlin-emit: kernels built ahead of time (TYPES[:OPS], "
                     "all)"),
      llvm::cl::init(SnacEmitOptions().aot)};
  Option<std::string> out{
      *this, "out",
      llvm::cl::desc("purlin-emit: the folder to write ('-': print the "
                     "sources); empty: no purlin-emit"),
      llvm::cl::init("")};
};

/// purlin-snac-infer, purlin-snac-check, then (when `opts.out` is set)
/// purlin-emit, printing to `code` rather than stdout for out=-.
void buildPipeline(mlir::OpPassManager &pm, const PipelineOptions &opts,
                   llvm::raw_ostream *code = nullptr);

/// Registers buildPipeline as purlin-opt's --purlin-pipeline="...".
void registerPipeline();

/// What purlinc prints.
enum class EmitKind {
  Layout, // the layout dialect (MLIR)
  Desc,   // the plain description (purlin/spec/Collective.h, writeDesc)
  Snac,   // the layout dialect plus its inferred, checked snac programs
  Plan,   // the snac programs as plain plan text (purlin/spec/Plan.h)
  Atom,   // the plans lowered to executor/atom calls, for --target
  Cuda,   // the same, for a GPU --target only
};
std::optional<EmitKind> parseEmitKind(llvm::StringRef name);
/// The accepted --emit values, for messages and --help: "layout, desc".
std::string emitKindNames();

struct CompileOptions {
  EmitKind kind = EmitKind::Layout;
  /// When set, write the target's code into this folder instead of printing
  /// `kind` (purlinc --target=T -o DIR).
  std::string outDir;
  PipelineOptions pipeline;     // pipeline.out is set by compile()
  bool printLocations = false;  // print loc(...) in printed IR
  bool printIRAfterAll = false; // the IR after import and each pass, to errs
  std::string dumpDir; // the IR after import and each pass, one file each
};

/// The checks that need no source (the target is a row of the table, a GPU
/// one for --emit=cuda; the strategy is known; small-bytes is not
/// negative). False with `error` set: a command-line error.
bool checkOptions(const CompileOptions &opts, std::string &error);

/// The IR stages: imports `c` (already verified) into the layout dialect,
/// runs the pipeline as far as `opts.kind` needs and prints that stage to
/// `os`, or writes the target's code into opts.outDir. Diagnostics print to
/// `errs` at their source position.
bool compile(const Source &src, const Collective &c, CompileOptions &opts,
             llvm::raw_ostream &os, llvm::raw_ostream &errs);

} // namespace purlin
