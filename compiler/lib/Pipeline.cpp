// The IR stages of the compiler: import into the layout dialect, the pass
// pipeline (inference, checking, lowering to a target: all passes on the
// IR), and printing or dumping a stage. purlinc and purlin-opt share it.
#include "purlin/Pipeline.h"

#include "purlin/Dialect/Layout/Convert.h"
#include "purlin/Dialect/Snac/Convert.h"
#include "purlin/Registration.h"
#include "purlin/spec/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"

namespace purlin {

std::optional<EmitKind> parseEmitKind(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<EmitKind>>(name)
      .Case("layout", EmitKind::Layout)
      .Case("desc", EmitKind::Desc)
      .Case("snac", EmitKind::Snac)
      .Case("plan", EmitKind::Plan)
      .Case("atom", EmitKind::Atom)
      .Case("cuda", EmitKind::Cuda)
      .Default(std::nullopt);
}

std::string emitKindNames() { return "layout, desc, snac, plan, atom, cuda"; }

void buildPipeline(mlir::OpPassManager &pm, const PipelineOptions &o,
                   llvm::raw_ostream *code) {
  SnacInferOptions infer;
  infer.strategy = o.strategy;
  infer.lanes = o.lanes;
  infer.chunks = o.chunks;
  infer.smallBytes = o.smallBytes;
  infer.epilogueSmallBytes = o.epilogueSmallBytes;
  infer.epilogueDirectBytes = o.epilogueDirectBytes;
  infer.llBytes = o.llBytes;
  infer.epilogueUnfusedBytes = o.epilogueUnfusedBytes;
  infer.ll128Bytes = o.ll128Bytes;
  infer.epilogueWideRows = o.epilogueWideRows;
  infer.epilogueUnfusedRows = o.epilogueUnfusedRows;
  pm.addPass(createSnacInfer(infer));
  SnacCheckOptions check;
  check.maxRanks = o.maxRanks;
  pm.addPass(createSnacCheck(check));
  if (o.out.empty())
    return;
  SnacEmitOptions emit;
  emit.target = o.target;
  emit.out = o.out;
  emit.aot = o.aot;
  pm.addPass(createSnacEmit(emit, code));
}

void registerPipeline() {
  mlir::PassPipelineRegistration<PipelineOptions>(
      "purlin-pipeline",
      "purlinc's pipeline: purlin-snac-infer, purlin-snac-check and, with "
      "out=DIR (or out=-), purlin-emit",
      [](mlir::OpPassManager &pm, const PipelineOptions &o) {
        buildPipeline(pm, o);
      });
}

bool checkOptions(const CompileOptions &o, std::string &error) {
  const PipelineOptions &p = o.pipeline;
  const std::string target = p.target, strategy = p.strategy;
  const TargetInfo *t = findTarget(target);
  if (!t) {
    error = "unknown target '" + target + "' (" + targetNames() + ")";
    return false;
  }
  if (o.kind == EmitKind::Cuda && o.outDir.empty() && !t->gpu()) {
    error =
        "--emit=cuda needs a GPU target (--target=" + targetNames(true) + ")";
    return false;
  }
  if (strategy != "auto" && !llvm::is_contained(strategyNames(), strategy)) {
    error =
        "unknown strategy '" + strategy + "' (" + strategyList() + ", auto)";
    return false;
  }
  if (p.smallBytes < 0) {
    error = "--small-bytes must not be negative (0: no one-shot band), got " +
            std::to_string((int64_t)p.smallBytes);
    return false;
  }
  if (p.llBytes < 0 && p.llBytes != kAutoLLBytes) {
    error = "--ll-bytes must not be negative (0: no low-latency band; -1: "
            "the default rule), got " + std::to_string((int64_t)p.llBytes);
    return false;
  }
  if (p.epilogueUnfusedBytes < 0) {
    error = "--epilogue-unfused-bytes must not be negative (0: no unfused "
            "band), got " + std::to_string((int64_t)p.epilogueUnfusedBytes);
    return false;
  }
  // The default LL band gives way to an LL128 band asked alone (Infer.cpp).
  const int64_t llEdge = p.llBytes == kAutoLLBytes ? 0 : (int64_t)p.llBytes;
  if (p.ll128Bytes < 0 || (p.ll128Bytes > 0 && p.ll128Bytes <= llEdge)) {
    error = "--ll128-bytes must be 0 (no LL128 band) or exceed --ll-bytes (" +
            std::to_string(llEdge) +
            ": the LL128 band starts where the LL band ends), got " +
            std::to_string((int64_t)p.ll128Bytes);
    return false;
  }
  if (p.epilogueSmallBytes < 0) {
    error = "--epilogue-small-bytes must not be negative (0: no one-shot "
            "band), got " + std::to_string((int64_t)p.epilogueSmallBytes);
    return false;
  }
  if (p.epilogueWideRows < 0 || p.epilogueUnfusedRows < 0) {
    error = std::string(p.epilogueWideRows < 0 ? "--epilogue-wide-rows"
                                               : "--epilogue-unfused-rows") +
            " must not be negative (0: no such band), got " +
            std::to_string(p.epilogueWideRows < 0 ? (int64_t)p.epilogueWideRows
                                                  : (int64_t)p.epilogueUnfusedRows);
    return false;
  }
  if (p.epilogueDirectBytes < 0 && p.epilogueDirectBytes != kAutoEpilogueDirectBytes) {
    error = "--epilogue-direct-bytes must be -1 (as --epilogue-small-bytes) "
            "or not negative, got " + std::to_string((int64_t)p.epilogueDirectBytes);
    return false;
  }
  return true;
}

namespace {
/// Writes the IR after each pass into `dir`, numbered in order after the
/// import (0-layout.mlir): 1-purlin-snac-infer.mlir, ...
struct StageDumper : mlir::PassInstrumentation {
  StageDumper(std::string dir, mlir::OpPrintingFlags flags)
      : dir(std::move(dir)), flags(flags) {}
  void runAfterPass(mlir::Pass *pass, mlir::Operation *op) override {
    write(pass->getArgument().str(), op);
  }
  void write(const std::string &stage, mlir::Operation *op) {
    std::string path = dir + "/" + std::to_string(n++) + "-" + stage + ".mlir";
    std::error_code ec;
    llvm::raw_fd_ostream f(path, ec, llvm::sys::fs::OF_Text);
    if (ec) {
      llvm::errs() << "purlinc: warning: cannot write '" << path
                   << "': " << ec.message() << "\n";
      return;
    }
    op->print(f, flags);
  }
  std::string dir;
  mlir::OpPrintingFlags flags;
  int n = 0;
};
} // namespace

bool compile(const Source &src, const Collective &c, CompileOptions &opts,
             llvm::raw_ostream &os, llvm::raw_ostream &errs) {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  // IR printing at module scope wants one thread; the passes are module
  // passes anyway.
  ctx.disableMultithreading();
  // A diagnostic points at the source line; the op behind it is noise here.
  ctx.printOpOnDiagnostic(false);

  // Diagnostics at the source line and column, as the frontend prints them.
  // Warnings are dropped: the only ones are the layout verifier's, which
  // verifySource printed already at finer positions.
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    if (d.getSeverity() == mlir::DiagnosticSeverity::Warning)
      return mlir::success();
    auto print = [&](mlir::Diagnostic &x, const char *sev) {
      Diag diag;
      diag.message = x.str();
      if (auto fl = x.getLocation()->findInstanceOf<mlir::FileLineColLoc>()) {
        diag.loc.line = (int)fl.getLine();
        diag.loc.col = (int)fl.getColumn();
      }
      printDiag(errs, src, diag, sev);
    };
    print(d,
          d.getSeverity() == mlir::DiagnosticSeverity::Note ? "note" : "error");
    for (mlir::Diagnostic &note : d.getNotes())
      print(note, "note");
    return mlir::success();
  });

  mlir::OpPrintingFlags flags;
  if (opts.printLocations)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  std::unique_ptr<StageDumper> dumper;
  if (!opts.dumpDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(opts.dumpDir)) {
      errs << "purlinc: error: cannot create '" << opts.dumpDir
           << "': " << ec.message() << "\n";
      return false;
    }
    dumper = std::make_unique<StageDumper>(opts.dumpDir, flags);
  }

  // Import: the first stage of the IR.
  mlir::OpBuilder b(&ctx);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(module->getBody());
  if (mlir::failed(layout::importCollective(b, c, src.path)) ||
      mlir::failed(mlir::verify(*module)))
    return false;
  if (opts.printIRAfterAll) {
    errs << "// -----// IR Dump After Import (.purlin -> layout dialect) "
            "('builtin.module' operation) //----- //\n";
    module->print(errs, flags);
    errs << "\n";
  }
  if (dumper)
    dumper->write("layout", *module);

  if (opts.kind == EmitKind::Layout && opts.outDir.empty()) {
    module->print(os, flags);
    return true;
  }
  if (opts.kind == EmitKind::Desc && opts.outDir.empty()) {
    // The description of the IR, not of the parsed source: the two are the
    // same collective (the conversions are lossless), and this is the one
    // the generated code embeds.
    Collective back;
    if (mlir::failed(layout::exportCollective(
            *module->getOps<layout::CollectiveOp>().begin(), back)))
      return false;
    os << writeDesc(back);
    return true;
  }

  mlir::PassManager pm(&ctx);
  const bool code = !opts.outDir.empty() || opts.kind == EmitKind::Atom ||
                    opts.kind == EmitKind::Cuda;
  opts.pipeline.out = !opts.outDir.empty() ? opts.outDir
                      : code               ? std::string("-")
                                           : std::string();
  buildPipeline(pm, opts.pipeline, &os);
  if (opts.printIRAfterAll)
    pm.enableIRPrinting([](mlir::Pass *, mlir::Operation *) { return false; },
                        [](mlir::Pass *, mlir::Operation *) { return true; },
                        /*printModuleScope=*/true,
                        /*printAfterOnlyOnChange=*/false,
                        /*printAfterOnlyOnFailure=*/false, errs, flags);
  if (dumper)
    pm.addInstrumentation(std::move(dumper));
  if (mlir::failed(pm.run(*module)))
    return false;
  if (code)
    return true;
  if (opts.kind == EmitKind::Snac) {
    module->print(os, flags);
    return true;
  }
  // EmitKind::Plan: the programs as plain plans.
  for (auto prog : module->getOps<snac::ProgramOp>()) {
    Plan p;
    llvm::SmallVector<mlir::Operation *> steps;
    if (mlir::failed(snac::exportPlan(prog, p, steps)))
      return false;
    os << writePlan(p) << "  inplace_safe " << (p.inplaceSafe ? 1 : 0)
       << " inplace_same " << (p.inplaceSame ? 1 : 0) << " inplace_max_ranks "
       << p.inplaceMaxRanks << " band [" << p.minBytes
       << ", " << p.maxBytes << ")"
       << (p.maxRows != 0 ? " rows [" + std::to_string(p.minRows) + ", " +
                                std::to_string(p.maxRows) + ") elems [" +
                                std::to_string(p.minRowElems) + ", " +
                                std::to_string(p.maxRowElems) + ")" +
                                (p.maxRowsInPlace != 0
                                     ? " in_place_rows " + std::to_string(p.maxRowsInPlace)
                                     : std::string())
                          : std::string())
       << (p.severalLaunches ? " several_launches" : "") << "\n";
  }
  return true;
}

} // namespace purlin
