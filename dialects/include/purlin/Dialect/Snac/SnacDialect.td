#ifndef PURLIN_DIALECT_SNAC_DIALECT_TD
#define PURLIN_DIALECT_SNAC_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"

def Snac_Dialect : Dialect {
  let name = "snac";
  let cppNamespace = "::purlin::snac";
  let summary = "Stage, Notify And Consume: where and when data moves";
  let description = [{
    The second IR of purlin. A `snac.program` is the SPMD program that every
    rank runs on each of its lanes for one strategy of a `layout.collective`:
    stage data where its consumer can reach it, notify the consumer with a
    monotonic epoch, wait, and consume (copy or reduce) into the output.
    Signals are first-class (`snac.signal`); epochs are implicit: every
    launch bumps each lane's epoch, a notify stores it, a wait waits for it.
    Steps inside `snac.chunks` run once per chunk, pipelined.

    The semantics of each step (which names, which peers) are those of
    `spec/include/purlin/spec/Exec.h`; `purlin-snac-check` simulates a program
    for several rank counts and proves it free of races and deadlocks.
  }];
}

class Snac_Op<string mnemonic, list<Trait> traits = []>
    : Op<Snac_Dialect, mnemonic, traits>;

def Snac_StageMode : I32EnumAttr<"StageMode", "how a stage makes data reachable", [
    I32EnumAttrCase<"expose", 0>, I32EnumAttrCase<"copy", 1>,
    I32EnumAttrCase<"push", 2>]> {
  let cppNamespace = "::purlin::snac";
}
def Snac_PeerSet : I32EnumAttr<"PeerSet", "which peers a notify or wait addresses", [
    I32EnumAttrCase<"all", 0>, I32EnumAttrCase<"srcs", 1>,
    I32EnumAttrCase<"dsts", 2>, I32EnumAttrCase<"group", 3>,
    I32EnumAttrCase<"self", 4>]> {
  let cppNamespace = "::purlin::snac";
}
def Snac_Selection : I32EnumAttr<"Selection", "which names a consume combines", [
    I32EnumAttrCase<"mine", 0>, I32EnumAttrCase<"owned", 1>]> {
  let cppNamespace = "::purlin::snac";
}
def Snac_Source : I32EnumAttr<"Source", "where a consume reads contributions", [
    I32EnumAttrCase<"input", 0>, I32EnumAttrCase<"scratch", 1>,
    I32EnumAttrCase<"staging", 2>, I32EnumAttrCase<"partial", 3>,
    I32EnumAttrCase<"output", 4>, I32EnumAttrCase<"received", 5>,
    I32EnumAttrCase<"owners", 6>]> {
  let cppNamespace = "::purlin::snac";
}
def Snac_LineFormat : I32EnumAttr<"LineFormat",
    "the line format of a flagged push and its consume", [
    I32EnumAttrCase<"ll", 1>, I32EnumAttrCase<"ll128", 2>]> {
  let cppNamespace = "::purlin::snac";
}
def Snac_Dest : I32EnumAttr<"Dest", "where a consume writes", [
    I32EnumAttrCase<"self", 0>, I32EnumAttrCase<"all", 1>,
    I32EnumAttrCase<"partial", 2>, I32EnumAttrCase<"received", 3>]> {
  let cppNamespace = "::purlin::snac";
}

#endif // PURLIN_DIALECT_SNAC_DIALECT_TD
