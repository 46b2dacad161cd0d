// The passes of purlin (TableGen declares them; impl::*Base classes and the
// registration are generated).
#ifndef PURLIN_PASSES_TD
#define PURLIN_PASSES_TD

include "mlir/Pass/PassBase.td"

def SnacInfer : Pass<"purlin-snac-infer", "::mlir::ModuleOp"> {
  let summary = "infer Stage / Notify / Consume programs from layouts";
  let description = [{
    For every `layout.collective` of the module, adds the `snac.program`s
    of its strategies after it. The programs are derived from each name
    clause's rank roles (who contributes, who receives), never from the
    collective's name. With `strategy=auto` (the default), the chooser's set
    of programs with their size bands: one-shot (`direct`) for small
    messages, `two_shot` for large reductions of every rank's contributions
    that every rank or one rank receives, and the in-place-safe variants
    (`direct_copy`, `two_shot_copy`).

    ```mlir
    // purlin-opt --purlin-snac-infer="strategy=staged chunks=4"
    ```
  }];
  let options = [
    Option<"strategy", "strategy", "std::string", "\"auto\"",
           "direct, direct_copy, two_shot, two_shot_copy, staged, staged_ll, "
           "staged_ll128, direct_unfused, direct_copy_unfused, two_shot_unfused, "
           "two_shot_gather or auto">,
    Option<"lanes", "lanes", "int", "0",
           "lanes per rank (0: the chooser's default)">,
    Option<"chunks", "chunks", "int", "0",
           "chunks of the staged strategy's pipeline (0: default, 4)">,
    Option<"smallBytes", "small-bytes", "int64_t", "::purlin::kDefaultSmallBytes",
           "auto: below this many bytes per rank, one-shot (0: never)">,
    Option<"epilogueSmallBytes", "epilogue-small-bytes", "int64_t",
           "::purlin::kDefaultEpilogueSmallBytes",
           "auto, a collective with an epilogue: below this many bytes per "
           "rank, one-shot; from it on, row-owned two-shot (0: never one-shot)">,
    Option<"epilogueDirectBytes", "epilogue-direct-bytes", "int64_t",
           "::purlin::kAutoEpilogueDirectBytes",
           "auto, a collective with an epilogue, out of place: below this "
           "many bytes per rank, the fused one-shot (its in-place plan "
           "keeps epilogue-small-bytes; -1, the default: as "
           "epilogue-small-bytes, 512 KiB + 1 at its default)">,
    Option<"llBytes", "ll-bytes", "int64_t", "::purlin::kAutoLLBytes",
           "auto: below this many bytes per rank, a staged_ll plan chosen "
           "only where the ranks run in several launches (0: none; -1, the "
           "default: 64 KiB for a collective whose clauses all go from "
           "every rank to every rank without an epilogue, else none)">,
    Option<"epilogueUnfusedBytes", "epilogue-unfused-bytes", "int64_t",
           "::purlin::kDefaultEpilogueUnfusedBytes",
           "auto, a collective with an epilogue: from this many bytes per "
           "rank on, the unfused plans (the epilogue apart from the "
           "combine; 0: none)">,
    Option<"ll128Bytes", "ll128-bytes", "int64_t", "0",
           "auto: from ll-bytes up to this many bytes per rank, a "
           "staged_ll128 plan chosen only where the ranks run in several "
           "launches (0: none; else it must exceed ll-bytes)">,
    Option<"epilogueWideRows", "epilogue-wide-rows", "int64_t",
           "::purlin::kDefaultEpilogueWideRows",
           "auto, a collective with an epilogue: rows wider than 8192 "
           "elements run one-shot through this many rows (one row, and in "
           "place: the unfused one-shot), two_shot_gather beyond, whatever "
           "their bytes (0: none)">,
    Option<"epilogueUnfusedRows", "epilogue-unfused-rows", "int64_t",
           "::purlin::kDefaultEpilogueUnfusedRows",
           "auto, a collective with an epilogue: from this many rows of "
           "4096 to 8192 elements, the unfused two-shot, whatever their "
           "bytes (0: none)">,
  ];
  let dependentDialects = ["::purlin::snac::SnacDialect"];
}

def SnacCheck : Pass<"purlin-snac-check", "::mlir::ModuleOp"> {
  let summary = "prove snac programs right: no race, no deadlock, the postcondition";
  let description = [{
    Runs every `snac.program` through the executor's own step functions
    (exec.h) on a symbolic target, with memory simulated per element and
    symbolic values, for 1 to `max-ranks` ranks, the program's lanes and
    chunks, every element size, counts that put lane, chunk and vector
    boundaries inside boxes, two launches in a row and both launch models.
    Reports, at the step: a read or write of an element not ordered with
    another process's write (a missing wait, or a buffer reused before its
    consumer is done), a wait no notify satisfies (deadlock), an output
    element that does not end up with its name's contributions combined in
    ascending rank order (missing, doubled, out of order), a write no name
    asks for, and steps that do not cover the collective. Sets
    `inplace_safe` on programs also right with each rank's outputs
    overlapping its inputs anyhow, `inplace_same` on those right with each
    output at its input's address, and `inplace_max_ranks` to the rank
    count those proofs reach.
  }];
  let options = [
    Option<"maxRanks", "max-ranks", "int", "8",
           "check for every rank count from 1 to this">,
  ];
}

def SnacEmit : Pass<"purlin-emit", "::mlir::ModuleOp"> {
  let summary = "lower checked snac programs to a target's C++ or CUDA";
  let description = [{
    For every `layout.collective` of the module and its `snac.program`s (in
    module order), generates the target-independent C++ that calls the
    executor, with the entry of `target`, a row of the target table
    (`spec/include/purlin/spec/Targets.def`).
    With `out=DIR`, writes `DIR/NAME.purlin.{cpp|cu}` and `DIR/NAME.purlin.h`
    for each collective and rewrites `DIR/registry.cpp` to list every
    collective whose header is in DIR: exactly what
    `purlinc FILE --target=T -o DIR` writes. With `out=-` (the default),
    prints each collective's source to stdout (`purlinc --emit=atom`). The
    IR is left unchanged. A collective without programs is an error (run
    `--purlin-snac-infer` first); programs are lowered as they are, so run
    `--purlin-snac-check` first for the `inplace_*` marks the runtime
    chooses by. For a GPU target, `aot` names the element types and ops
    whose kernels are built ahead of time; the plans' code is also kept as
    text (`kSource`), from which the runtime compiles the other pairs at
    first use (docs/runtime.md).

    ```mlir
    // purlin-opt f.mlir --purlin-snac-infer --purlin-snac-check \
    //     --purlin-emit="target=sm_90 out=gen/sm_90"
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", "\"host\"",
           "a row of the target table (purlin/spec/Targets.def)">,
    Option<"out", "out", "std::string", "\"-\"",
           "folder to write the sources, header and registry into; '-': "
           "print the sources to stdout">,
    Option<"aot", "aot", "std::string", "\"\"",
           "GPU targets: the element types and ops whose kernels are built "
           "ahead of time, TYPES[:OPS] or 'all' (default: what the source "
           "binds, else bf16,f16,f32:sum); the runtime compiles the others "
           "at first use">,
  ];
}

#endif // PURLIN_PASSES_TD
