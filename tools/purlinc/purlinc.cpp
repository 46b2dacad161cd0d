// purlinc: compiles a .purlin collective and prints a stage of it. A thin CLI
// over purlin/Pipeline.h: parse -> verify -> layout IR -> passes (infer,
// check, emit) -> the stage asked for.
#include "purlin/Pipeline.h"
#include "purlin/spec/Target.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

namespace {
constexpr const char *kFooter = R"(
Examples:
  purlinc examples/all_reduce.purlin                  the layout dialect
  purlinc examples/all_reduce.purlin --emit=desc      the plain description
  purlinc examples/broadcast.purlin --ranks 8 --root 3 --dtype bf16
  purlinc examples/all_to_all_v.purlin -D R=2 -D cnt=1:2:0:2 -D M=2
  purlinc examples/all_reduce.purlin --emit=snac      inferred, checked programs
  purlinc examples/all_reduce.purlin --emit=plan --strategy=staged --chunks=4
  purlinc examples/all_reduce.purlin --emit=cuda --target=sm_90
  purlinc examples/all_reduce.purlin --target=host -o gen/host   compile
  purlinc examples/all_reduce.purlin --target=sm_90 --aot=f32,i32:sum,max -o gen
  purlinc examples/all_reduce.purlin --emit=snac --dump-stages stages/

Parameters left unbound stay symbolic: the collective is then verified under
small sample values (R of 1, 2, 3 and 5, ...). Bound values are verified as
given. Errors print as FILE:LINE:COL: error: ..., with the source line; the
exit status is 0 on success, 1 on an error in the source or its bindings,
2 on a command-line error.)";

int commandLineError(const std::string &msg) {
  llvm::errs() << "purlinc: error: " << msg << "\n";
  return 2;
}
} // namespace

int main(int argc, char **argv) {
  CLI::App app{"purlinc: the purlin compiler. Reads a collective written in "
               "the .purlin language\n(docs/language.md), verifies it and "
               "prints the stage chosen by --emit."};
  app.footer(kFooter);

  std::string input, output = "-", emitName = "layout";
  purlin::BindOptions bind;
  purlin::CompileOptions opts;
  int64_t ranks = 0, count = 0, root = 0;
  // Pipeline options through plain variables (CLI11 binds those), starting
  // from the passes' defaults.
  std::string target = opts.pipeline.target, strategy = opts.pipeline.strategy,
              aot = opts.pipeline.aot;
  int lanes = opts.pipeline.lanes, chunks = opts.pipeline.chunks;
  int64_t smallBytes = opts.pipeline.smallBytes;
  int64_t epilogueSmallBytes = opts.pipeline.epilogueSmallBytes;
  int64_t epilogueDirectBytes = opts.pipeline.epilogueDirectBytes;
  int64_t llBytes = opts.pipeline.llBytes;
  int64_t epilogueUnfusedBytes = opts.pipeline.epilogueUnfusedBytes;
  int64_t ll128Bytes = opts.pipeline.ll128Bytes;
  int64_t epilogueWideRows = opts.pipeline.epilogueWideRows;
  int64_t epilogueUnfusedRows = opts.pipeline.epilogueUnfusedRows;
  app.add_option("input", input, "the .purlin source ('-' reads stdin)")
      ->required();
  app.add_option("--emit", emitName,
                 "the stage to print: " + purlin::emitKindNames() +
                     " (default: layout)");
  app.add_option("-o,--output", output, "where to write (default: stdout)");
  app.add_option("-D,--define", bind.defines,
                 "bind a parameter: NAME=VALUE, repeatable; a table's entries "
                 "as a:b:c (row-major)")
      ->allow_extra_args(false);
  auto *ranksOpt =
      app.add_option("--ranks", ranks, "bind the rank-count parameter");
  auto *countOpt =
      app.add_option("--count", count, "bind every count parameter");
  auto *rootOpt = app.add_option("--root", root, "bind every root parameter");
  app.add_option("--dtype", bind.dtype,
                 "bind every type parameter (f32, f16, bf16, f8e4m3, f8e5m2, "
                 "i8, u8, i32, i64, f64)");
  app.add_option("--op", bind.op,
                 "bind every redop parameter (sum, prod, min, max, avg)");
  app.add_flag("--print-locs", opts.printLocations,
               "print the source location of every op in printed IR");
  auto *targetOpt = app.add_option(
      "--target", target,
      "compile for " + purlin::targetNames() +
          ": with -o DIR (and no --emit) writes DIR/NAME.purlin.{cpp|cu,h} "
          "and DIR/registry.cpp");
  app.add_option("--aot", aot,
                 "GPU targets: the element types and ops whose kernels are "
                 "built ahead of time: TYPES[:OPS] (e.g. bf16,f32:sum,max; "
                 "OPS default sum) or all; default: what the source binds, "
                 "else bf16,f16,f32:sum. The runtime compiles the other "
                 "pairs at first use (NVRTC)");
  app.add_option("--strategy", strategy,
                 "SNAC strategy: auto (default: the size chooser), " +
                     purlin::strategyList());
  app.add_option("--lanes", lanes, "lanes per rank (0: default)");
  app.add_option("--chunks", chunks, "pipeline chunks (0: default)");
  app.add_option("--small-bytes", smallBytes,
                 "auto: one-shot below this many bytes per rank (0: never)");
  app.add_option("--epilogue-small-bytes", epilogueSmallBytes,
                 "auto, a collective with an epilogue: one-shot below this "
                 "many bytes per rank, row-owned two-shot from it (0: never "
                 "one-shot)");
  app.add_option("--epilogue-direct-bytes", epilogueDirectBytes,
                 "auto, a collective with an epilogue, out of place: the "
                 "fused one-shot below this many bytes per rank (-1, the "
                 "default: as --epilogue-small-bytes; 512 KiB + 1 at its "
                 "default)");
  app.add_option("--ll-bytes", llBytes,
                 "auto: below this many bytes per rank, a staged_ll plan "
                 "(flagged lines, no barrier) chosen only where the ranks run "
                 "in several launches, the several-GPU launch model (0: none; "
                 "-1, the default: 64 KiB for a collective whose clauses all "
                 "go from every rank to every rank without an epilogue, as "
                 "all_reduce's, else none)");
  app.add_option("--epilogue-unfused-bytes", epilogueUnfusedBytes,
                 "auto, a collective with an epilogue: from this many bytes "
                 "per rank on, the unfused plans (direct_unfused, "
                 "two_shot_unfused: the epilogue apart from the combine, the "
                 "same results; default 4 MiB, where they beat the fused "
                 "two-shot on the H200 and H100; 0: none)");
  app.add_option("--epilogue-wide-rows", epilogueWideRows,
                 "auto, a collective with an epilogue: rows wider than 8192 "
                 "elements (the SM target's wide kernels) run one-shot "
                 "through this many rows (in place the unfused one-shot; a "
                 "single row the unfused one-shot), two_shot_gather beyond, "
                 "whatever their bytes (default 16, measured on the H100; "
                 "0: none)");
  app.add_option("--epilogue-unfused-rows", epilogueUnfusedRows,
                 "auto, a collective with an epilogue: from this many rows "
                 "of 4096 to 8192 elements, the unfused two-shot, below "
                 "--epilogue-unfused-bytes too (default 129, measured on "
                 "the H100; 0: none)");
  app.add_option("--ll128-bytes", ll128Bytes,
                 "auto: from --ll-bytes up to this many bytes per rank, a "
                 "staged_ll128 plan (128-byte flagged lines) chosen only "
                 "where the ranks run in several launches (0, the default: "
                 "none; else above --ll-bytes)");
  app.add_flag("--print-ir-after-all", opts.printIRAfterAll,
               "print the IR after the import and after every pass to stderr");
  app.add_option("--dump-stages", opts.dumpDir,
                 "write the IR after the import and after every pass into "
                 "this folder (0-layout.mlir, 1-purlin-snac-infer.mlir, ...)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (*ranksOpt)
    bind.ranks = ranks;
  if (*countOpt)
    bind.count = count;
  if (*rootOpt)
    bind.root = root;
  opts.pipeline.target = target;
  opts.pipeline.aot = aot;
  opts.pipeline.strategy = strategy;
  opts.pipeline.lanes = lanes;
  opts.pipeline.chunks = chunks;
  opts.pipeline.smallBytes = smallBytes;
  opts.pipeline.epilogueSmallBytes = epilogueSmallBytes;
  opts.pipeline.epilogueDirectBytes = epilogueDirectBytes;
  opts.pipeline.llBytes = llBytes;
  opts.pipeline.epilogueUnfusedBytes = epilogueUnfusedBytes;
  opts.pipeline.ll128Bytes = ll128Bytes;
  opts.pipeline.epilogueWideRows = epilogueWideRows;
  opts.pipeline.epilogueUnfusedRows = epilogueUnfusedRows;

  // --target with -o and no --emit: compile into a folder.
  bool toDir = *targetOpt && !app.count("--emit");
  if (toDir && output == "-")
    return commandLineError("--target without --emit writes files: give the "
                            "output folder with -o DIR");
  auto emitKind = purlin::parseEmitKind(emitName);
  if (!emitKind)
    return commandLineError("unknown --emit value '" + emitName +
                            "' (expected one of: " + purlin::emitKindNames() +
                            ")");
  opts.kind = *emitKind;
  if (toDir)
    opts.outDir = output;
  std::string error;
  if (!purlin::checkOptions(opts, error))
    return commandLineError(error);

  purlin::Source src;
  if (!purlin::loadSource(input, src, error)) {
    llvm::errs() << "purlinc: error: " << error << "\n";
    return 1;
  }
  purlin::Collective c;
  if (!purlin::parseSource(src, c, llvm::errs()))
    return 1;
  if (!purlin::bindParams(c, bind, error)) {
    llvm::errs() << "purlinc: error: " << error << "\n";
    return 1;
  }
  if (!purlin::verifySource(src, c, llvm::errs()))
    return 1;

  std::string text;
  llvm::raw_string_ostream os(text);
  if (!purlin::compile(src, c, opts, os, llvm::errs()))
    return 1;
  os.flush();
  if (toDir)
    return 0;
  // --emit=snac --target=T: which datapath of the runtime plays these
  // programs (the row's DATAPATH column), as a comment the parsers skip.
  if (*targetOpt && opts.kind == purlin::EmitKind::Snac)
    if (const purlin::TargetInfo *ti = purlin::findTarget(target))
      text = std::string("// target ") + ti->name + ": datapath " +
             ti->datapath + "\n" + text;
  if (output == "-") {
    llvm::outs() << text;
    return 0;
  }
  std::error_code ec;
  llvm::raw_fd_ostream file(output, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    llvm::errs() << "purlinc: error: cannot write '" << output
                 << "': " << ec.message() << "\n";
    return 1;
  }
  file << text;
  return 0;
}
