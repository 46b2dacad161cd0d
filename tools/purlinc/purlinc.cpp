// purlinc: compiles a .purlin collective and prints a stage of it. A thin
// CLI over purlin/Pipeline.h, where the stages live.
#include "purlin/Pipeline.h"

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

Parameters left unbound stay symbolic: the collective is then verified under
small sample values (R of 1, 2, 3 and 5, ...). Bound values are verified as
given. Errors print as FILE:LINE:COL: error: ..., with the source line; the
exit status is 0 on success, 1 on an error in the source or its bindings,
2 on a command-line error.)";
} // namespace

int main(int argc, char **argv) {
  CLI::App app{"purlinc: the purlin compiler. Reads a collective written in "
               "the .purlin language\n(docs/language.md), verifies it and "
               "prints the stage chosen by --emit."};
  app.footer(kFooter);

  std::string input, output = "-", emitName = "layout";
  purlin::BindOptions bind;
  bool printLocs = false;
  int64_t ranks = 0, count = 0, root = 0;
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
  app.add_flag("--print-locs", printLocs,
               "with --emit=layout, print the source location of every op");
  purlin::EmitOptions opts;
  std::string targetDir;
  auto *targetOpt = app.add_option(
      "--target", opts.target,
      "compile for host, sm_80, sm_90 or sm_100: with -o DIR (and no --emit) "
      "writes DIR/NAME.purlin.{cpp|cu,h} and DIR/registry.cpp");
  app.add_option("--strategy", opts.strategy,
                 "SNAC strategy: auto (default: the size chooser), " +
                     purlin::strategyList());
  app.add_option("--lanes", opts.lanes, "lanes per rank (0: default)");
  app.add_option("--chunks", opts.chunks, "pipeline chunks (0: default)");
  app.add_option("--small-bytes", opts.smallBytes,
                 "auto: one-shot below this many bytes per rank");

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

  // --target with -o and no --emit: compile into a folder.
  bool toDir = *targetOpt && !app.count("--emit");
  if (toDir && output == "-") {
    llvm::errs() << "purlinc: error: --target without --emit writes files: "
                    "give the output folder with -o DIR\n";
    return 2;
  }
  auto emitKind = purlin::parseEmitKind(emitName);
  if (!emitKind) {
    llvm::errs() << "purlinc: error: unknown --emit value '" << emitName
                 << "' (expected one of: " << purlin::emitKindNames() << ")\n";
    return 2;
  }

  purlin::Source src;
  std::string error;
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

  if (toDir) {
    if (!purlin::compileToDir(c, src.path, opts, output, error)) {
      llvm::errs() << "purlinc: error: " << error << "\n";
      return 1;
    }
    return 0;
  }
  opts.kind = *emitKind;
  opts.printLocations = printLocs;
  std::string text;
  llvm::raw_string_ostream os(text);
  if (!purlin::emit(src, c, opts, os, error)) {
    llvm::errs() << "purlinc: error: " << error << "\n";
    return 1;
  }
  os.flush();
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
