// The stages of purlinc as a library: read and parse a `.purlin` source, bind
// parameters at compile time, verify, and emit a stage. The purlinc tool is a
// thin CLI over this file; tests and other tools call it directly.
//
// Adding a stage (snac, atom, cuda, ...): add an EmitKind, its name in
// parseEmitKind/emitKindNames, and its case in emit() (Pipeline.cpp).
#pragma once

#include "purlin/Plan/Plan.h"
#include "purlin/spec/Collective.h"

#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace purlin {

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

/// What purlinc prints.
enum class EmitKind {
  Layout, // the layout dialect (MLIR)
  Desc,   // the plain description (purlin/spec/Collective.h, writeDesc)
  Snac,   // the layout dialect plus its inferred, checked snac programs
  Plan,   // the snac programs as plain plan text (purlin/Plan/Plan.h)
  Atom,   // the plans lowered to executor/atom calls, for --target
  Cuda,   // the CUDA source for a GPU --target (sm_80, sm_90, sm_100)
};
std::optional<EmitKind> parseEmitKind(llvm::StringRef name);
/// The accepted --emit values, for messages and --help: "layout, desc".
std::string emitKindNames();

struct EmitOptions {
  EmitKind kind = EmitKind::Layout;
  bool printLocations = false; // Layout: print loc(...) attributes
  std::string target = "host";   // host, sm_80, sm_90, sm_100
  std::string strategy = "auto"; // purlin-snac-infer options
  int lanes = 0, chunks = 0;
  int64_t smallBytes = kDefaultSmallBytes;
  int checkRanks = 5;            // purlin-snac-check max-ranks
};

/// Runs SNAC inference and the checker on `c`; returns its checked plans.
/// Problems are reported to `errs` (the checker's at the program step).
bool inferAndCheck(const Collective &c, llvm::StringRef filename,
                   const EmitOptions &opts, std::vector<Plan> *plans,
                   std::string *snacText, std::string &error);

/// Compiles `c` for `opts.target` into `dir`: NAME.purlin.{cpp|cu} and
/// NAME.purlin.h, and rewrites dir/registry.cpp to list every collective
/// whose header is in `dir` (so a program can link all of them).
bool compileToDir(const Collective &c, llvm::StringRef filename,
                  const EmitOptions &opts, const std::string &dir,
                  std::string &error);

/// The layout dialect of `c` as MLIR text (a module holding one
/// layout.collective, with FileLineColLoc locations from `filename`).
bool emitLayout(const Collective &c, llvm::StringRef filename,
                bool printLocations, llvm::raw_ostream &os, std::string &error);

/// Emits the stage `opts.kind` of `c` (already verified) to `os`.
bool emit(const Source &src, const Collective &c, const EmitOptions &opts,
          llvm::raw_ostream &os, std::string &error);

} // namespace purlin
