#ifndef PURLIN_DIALECT_SNAC_OPS_TD
#define PURLIN_DIALECT_SNAC_OPS_TD

include "purlin/Dialect/Snac/SnacDialect.td"
include "mlir/IR/SymbolInterfaces.td"

def Snac_ProgramOp : Snac_Op<"program", [
    Symbol, SymbolTable, SingleBlock, NoTerminator, IsolatedFromAbove]> {
  let summary = "the SPMD program of one strategy of a collective";
  let description = [{
    What every rank runs on each of its `lanes` lanes, for the collective
    `of` names, with `chunks` chunks in the chunk loop. `band` is the size
    range (bytes of the largest buffer of one rank, `[min, max)`, max -1: no
    limit) the default chooser picked the program for; `rows [min, max)
    elems [emin, emax)` a band in the rows of a collective's epilogue, for
    rows of emin to emax elements (a max -1: no limit), which a call in it
    takes before the byte bands (the runtime's choosePlan); `in_place_rows
    N` its end for calls in place;
    `several_launches`
    that it is chosen only for a call whose ranks run in several launches
    (the several-GPU launch model: purlinc --ll-bytes); `inplace_safe` is
    set by `purlin-snac-check` when the program is right with outputs
    overlapping inputs anyhow, `inplace_same` when it is right with each
    output at the address of an input of its element type (implied by
    `inplace_safe`), and `inplace_max_ranks` to the largest rank count those
    proofs cover (a runtime runs the program in place for no more ranks).

    ```mlir
    snac.program @all_reduce_direct of @all_reduce "direct" lanes 2 chunks 1 band [0, 262144) {
      snac.signal @ready
      snac.signal @done
      snac.stage expose clause 0
      snac.notify @ready to dsts clause 0
      snac.wait @ready from srcs clause 0
      snac.consume mine from input to self clause 0
      snac.notify @done to srcs clause 0
      snac.wait @done from dsts clause 0
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, FlatSymbolRefAttr:$collective,
                   StrAttr:$strategy, I64Attr:$lanes, I64Attr:$chunks,
                   I64Attr:$min_bytes, I64Attr:$max_bytes,
                   UnitAttr:$several_launches,
                   UnitAttr:$inplace_safe, UnitAttr:$inplace_same,
                   OptionalAttr<I64Attr>:$inplace_max_ranks,
                   OptionalAttr<I64Attr>:$min_rows, OptionalAttr<I64Attr>:$max_rows,
                   OptionalAttr<I64Attr>:$min_row_elems,
                   OptionalAttr<I64Attr>:$max_row_elems,
                   OptionalAttr<I64Attr>:$max_rows_in_place);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `of` $collective $strategy `lanes` $lanes `chunks` $chunks
    `band` `[` $min_bytes `,` $max_bytes `)`
    (`rows` `[` $min_rows^ `,` $max_rows `)` `elems` `[` $min_row_elems `,` $max_row_elems `)`)?
    (`in_place_rows` $max_rows_in_place^)?
    (`several_launches` $several_launches^)? (`inplace_safe` $inplace_safe^)?
    (`inplace_same` $inplace_same^)?
    (`inplace_max_ranks` $inplace_max_ranks^)?
    attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
  }];
}

def Snac_SignalOp : Snac_Op<"signal", [Symbol, HasParent<"ProgramOp">]> {
  let summary = "a signal: one monotonic word per (peer, lane, chunk)";
  let description = [{
    ```mlir
    snac.signal @ready
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let assemblyFormat = "$sym_name attr-dict";
}

def Snac_ChunksOp : Snac_Op<"chunks", [
    SingleBlock, NoTerminator, HasParent<"ProgramOp">]> {
  let summary = "the chunk loop: its steps run once per chunk, in order";
  let description = [{
    ```mlir
    snac.chunks {
      snac.stage push clause 0
      snac.notify @data to dsts clause 0
    }
    ```
  }];
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict-with-keyword $body";
}

class Snac_StepOp<string mnemonic, list<Trait> traits = []>
    : Snac_Op<mnemonic, !listconcat(traits, [
        ParentOneOf<["ProgramOp", "ChunksOp"]>])>;

def Snac_StageOp : Snac_StepOp<"stage"> {
  let summary = "make a clause's contributions reachable by their consumers";
  let description = [{
    `expose`: peers read this rank's input in place; `copy`: copy the input
    into this rank's peer-visible scratch; `push`: write this rank's
    contributions into each destination's staging slot.

    ```mlir
    snac.stage push clause 0
    snac.stage push clause 0 flagged
    snac.stage push clause 0 flagged ll128
    snac.stage push clause 0 flagged parity
    ```

    `flagged` (push only): the low-latency protocol; every staged line
    carries the epoch beside its data, and the matching flagged consume
    polls the lines themselves instead of waiting for a notify. The line
    format follows (`ll128`: 128-byte lines of 120 data bytes and a flag
    word, the flag released after the data); without one, `ll` (16-byte
    lines of 8 data bytes and the flag twice).

    `parity` (flagged only): staging by launch parity. The clause's slots
    are doubled and launch e uses half e & 1; a line of launch e carries
    e's flag, so a stale line of launch e - 2 in the same half never
    matches. With it, a symmetric clause (every rank pushes to the ranks it
    consumes from) needs no `free` round: a writer reaches launch e + 2
    only after reading its destination's lines of launch e + 1, which the
    destination wrote after its launch e, the last to read that half. The
    clause's push and consume agree on it (the checker).
  }];
  let arguments = (ins Snac_StageMode:$mode, I64Attr:$clause,
                   OptionalAttr<Snac_LineFormat>:$flagged, UnitAttr:$parity);
  let assemblyFormat = [{
    $mode `clause` $clause custom<Flagged>($flagged, $parity) attr-dict
  }];
  let hasVerifier = 1;
}

def Snac_NotifyOp : Snac_StepOp<"notify"> {
  let summary = "release this lane's writes and signal peers with the epoch";
  let description = [{
    With `boundary`, the notify only orders against the launch boundary
    (see snac.wait): a target skips it when every rank runs in one launch.

    ```mlir
    snac.notify @ready to dsts clause 0
    snac.notify @done to srcs clause 0 boundary
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$signal, Snac_PeerSet:$peers,
                   I64Attr:$clause, UnitAttr:$boundary);
  let assemblyFormat = [{
    $signal `to` $peers `clause` $clause (`boundary` $boundary^)? attr-dict
  }];
  let hasVerifier = 1;
}

def Snac_WaitOp : Snac_StepOp<"wait"> {
  let summary = "wait until peers have notified in this epoch (acquire)";
  let description = [{
    With `all_lanes`, waits for every lane of each peer rather than the
    same lane. With `boundary`, the sync only orders against the launch
    boundary (inputs written before the launch; peers done reading before
    the caller, or the next launch, reuses a buffer): a target skips it when
    every rank of the communicator runs in one launch, whose start and end
    order all ranks. The checker proves the plan in both launch models.

    ```mlir
    snac.wait @ready from srcs clause 0 all_lanes
    snac.wait @done from dsts clause 0 boundary
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$signal, Snac_PeerSet:$peers,
                   I64Attr:$clause, UnitAttr:$all_lanes, UnitAttr:$boundary);
  let assemblyFormat = [{
    $signal `from` $peers `clause` $clause (`all_lanes` $all_lanes^)?
    (`boundary` $boundary^)? attr-dict
  }];
  let hasVerifier = 1;
}

def Snac_ConsumeOp : Snac_StepOp<"consume"> {
  let summary = "combine contributions (copy or reduce) into outputs";
  let description = [{
    `mine`: the names this rank receives, written to itself; `owned`: part
    r of all names, written to every destination (`all`), or kept in this
    rank's own output (`self`: the owner keeps its part).

    `flagged` (from staging only): reads lines a flagged push wrote, each
    once its flag shows this epoch; the line format as the push's
    (`flagged ll128`, or `flagged` for `ll`); `parity` as the push's (the
    half of this launch's parity).

    Partial results (a clause whose contributors are every rank): `to
    partial` writes the combination into this rank's partial results of
    the clause (scratch, at the names' source offsets); `from partial`
    combines this rank's partial result first, then the contributions, so
    that a reduction can be split into steps over groups of ranks (exact
    only where the element type holds the accumulator: the checker proves
    it per type). `ranks [lo, hi)` combines the contributions of ranks lo
    to hi - 1 only (`R`: every rank above lo); `from output` (`mine`, to
    `self`, a clause every rank receives) copies each part of the names
    from the output of its owner (which kept it: `owned ... to self`), the
    owners in `ranks [lo, hi)`.

    `epilogue`: the names go through the clause's epilogue
    (`layout.epilogue`) before they are stored: a one-shot consume
    (`mine` from `input` or `scratch` to `self`, every contributor) whose
    lanes take whole rows (`spec/include/purlin/spec/exec/Epilogue.h`).

    The unfused plans run a clause's epilogue apart from its combine: `to
    received` (from `input` or `scratch`, every contributor, no
    `epilogue`) keeps the combined rows as f32, not rounded, in this
    rank's received area, at the names' destination offsets: the names it
    receives (`mine`) or the rows it owns (`owned`, row-aligned owners); a
    later `mine from received to self ... epilogue` runs the statements
    over this rank's rows, `owned from received to all ... epilogue` over
    the rows it owns, for every rank with that rank's inputs and outputs.
    `mine from owners to self ... epilogue` (two_shot_gather) runs this
    rank's statements over its own rows, each row read from the received
    area of its owner (which kept it: `owned ... to received`), so the
    plan needs every lane of every owner done before it.
    The stores are what the fused consume stores, bit for bit on the host.

    ```mlir
    snac.consume mine from input to self clause 0 epilogue
    snac.consume owned from input to all clause 0
    snac.consume mine from staging to self clause 0 flagged
    snac.consume mine from staging to self clause 0 flagged ll128
    snac.consume mine from staging to self clause 0 flagged ll128 parity
    snac.consume mine from input to partial clause 0 ranks [0, 4)
    snac.consume mine from partial to self clause 0 ranks [4, R)
    snac.consume owned from input to self clause 0
    snac.consume mine from output to self clause 0
    snac.consume owned from input to received clause 0
    snac.consume mine from received to self clause 0 epilogue
    snac.consume owned from received to all clause 0 epilogue
    snac.consume mine from owners to self clause 0 epilogue
    ```
  }];
  let arguments = (ins Snac_Selection:$sel, Snac_Source:$src, Snac_Dest:$dst,
                   I64Attr:$clause, OptionalAttr<Snac_LineFormat>:$flagged,
                   UnitAttr:$parity, OptionalAttr<I64Attr>:$ranks_lo,
                   OptionalAttr<I64Attr>:$ranks_hi, UnitAttr:$epilogue);
  let assemblyFormat = [{
    $sel `from` $src `to` $dst `clause` $clause
    (`ranks` `[` $ranks_lo^ `,` custom<RankBound>($ranks_hi) `)`)?
    custom<Flagged>($flagged, $parity) (`epilogue` $epilogue^)? attr-dict
  }];
  let hasVerifier = 1;
}

#endif // PURLIN_DIALECT_SNAC_OPS_TD
