// A collective as named layouts: the plain, MLIR-free model that the
// compiler exports (`purlinc --emit=desc`) and that the runtime, the host
// target and the reference evaluator read.
//
// A collective has parameters (one rank count R, counts, a root, an element
// type T, tables of counts), buffers (inputs and outputs, each of a size per
// rank) and clauses. A clause names the points of an index space
// (dims d0 in [E0], d1 in [E1], ...; an extent may use earlier dims) and maps
// each name to its contributors (`from`: a buffer, a rank selector and an
// index) and its destinations (`to`). A rank selector is `*` (every rank),
// one rank (an expression of the dims and parameters, quasi-affine in the
// dims: `r`, `root`, `(r + 1) % R`, `g*G + j`) or a set of ranks (such an
// expression of a bound variable too, over the variable's extent:
// `{g*G + j | j in [G]}`). The dims a rank selector mentions are the rank
// coordinates; indexes are affine in the dims. The op is `copy` (exactly one
// contributor) or a reduction, applied in ascending contributor rank (see
// DType.h). Clauses apply in order: a clause may read an output that earlier
// clauses wrote (a step of a multi-step collective), as they left it.
#pragma once

#include "purlin/spec/DType.h"
#include "purlin/spec/Expr.h"
#include "purlin/spec/Vocabulary.h"

#include <map>
#include <string>
#include <vector>

namespace purlin {

struct SrcLoc {
  int line = 0, col = 0; // 1-based; 0 when unknown
  int tag = -1;          // opaque to the core: lets a client (the MLIR
                         // verifier) map a Diag back to its own location
};

/// Group: a group size, a divisor of the rank count (1 <= G <= R, R % G = 0).
enum class ParamKind { Ranks, Count, Root, Type, Op, Table, Group };
const char *paramKindName(ParamKind k); // "ranks", ..., "table", "group"
bool parseParamKind(const std::string &s, ParamKind &out);
/// Ranks, counts, roots and group sizes: the integer parameters. In
/// declaration order they are the executor's scalar slots
/// (exec::Params::s), for generated code and runtimes alike.
inline bool isScalarParam(ParamKind k) {
  return k == ParamKind::Ranks || k == ParamKind::Count ||
         k == ParamKind::Root || k == ParamKind::Group;
}

struct Param {
  std::string name;
  ParamKind kind = ParamKind::Count;
  std::vector<Expr> dims; // Table: extents (expressions of scalar params)
  Expr max;               // Table: every entry lies in [0, max]
  /// Empty while symbolic; else the value bound at compile time, as text:
  /// an integer, an element type name, an op name, or ':'-separated table
  /// entries.
  std::string bound;
  SrcLoc loc;
};

enum class BufferRole { In, Out };

struct Buffer {
  std::string name;
  BufferRole role = BufferRole::In;
  std::string dtype; // the name of a Type parameter, or a concrete type name
  Expr size;         // elements per rank
  SrcLoc loc;
};

/// A rank selector: `*`, one rank, or a set {rank | var in [extent]}.
struct RankSel {
  bool every = false;
  Expr rank;       // null when `every`
  std::string var; // a set: its bound variable; empty for one rank
  Expr extent;     // a set: the variable's extent (parameters only)
  bool isSet() const { return !var.empty(); }
};
/// The selector as the language writes it: "*", "root", "(r + 1) % R",
/// "{g*G + j | j in [G]}" (`modOp` as in Expr::str; `paren`: a compound
/// expression in parentheses, as the `.purlin` syntax wants it after '@').
std::string rankSelText(const RankSel &s, const char *modOp = "%",
                        bool paren = false);

struct Access {
  std::string buffer;
  RankSel rank;
  Expr index;
  SrcLoc loc, rankLoc, indexLoc;
};

struct Dim {
  std::string name;
  Expr extent;
  SrcLoc loc;
};

/// One statement of an epilogue: `let NAME = VALUE;` (an f32 value for the
/// statements after it) or `BUF[INDEX] = VALUE;` (a store to an output of
/// the rank that applies the epilogue, rounded once to the buffer's type).
struct EpiStmt {
  std::string let;    // a let: the name; empty for a store
  std::string buffer; // a store: the output
  Expr index;         // a store: the index (affine in the clause's coordinates)
  Expr value;         // f32 arithmetic (docs/language.md, "Epilogues")
  SrcLoc loc, valueLoc;
};

/// An epilogue of a reduce clause (`rows (n) { ... }`): what each rank does
/// with the names it receives before they are stored. The clause's
/// coordinates are the row coordinates (`rows`) and the inner ones (the
/// rest: one row's elements). Values are f32: `recv` is the received value
/// (the contributions combined, not rounded), a coordinate or a parameter
/// its value, `B[i]` an element of an input B of this rank (widened), `/`
/// a true division; the functions are sqrt, abs, min, max and the row
/// reductions rowsum and rowmax (over the row's inner coordinates). Every
/// store rounds once; the clause's destination is written by its store.
struct Epilogue {
  std::vector<std::string> rows; // the row coordinates; empty: no epilogue
  std::vector<EpiStmt> stmts;
  SrcLoc loc;
  bool empty() const { return rows.empty(); }
};
/// The functions of an epilogue's values: name, argument count, and
/// whether it reduces a row.
struct EpiFunction {
  const char *name;
  int args;
  bool rowReduction;
};
const EpiFunction *epiFunction(const std::string &name);
/// The name of the received value in an epilogue.
constexpr const char *kEpiRecv = "recv";

struct Clause {
  std::vector<Dim> dims;
  Access from, to;
  RedOp op = RedOp::Copy;
  std::string opParam; // when set, the op is this Op parameter's value
  SrcLoc loc, opLoc;
  Epilogue epilogue;
};

struct Collective {
  std::string name;
  std::vector<Param> params;
  std::vector<Buffer> buffers;
  std::vector<Clause> clauses;
  SrcLoc loc;

  const Param *param(const std::string &n) const;
  const Buffer *buffer(const std::string &n) const;
  int bufferIndex(const std::string &n) const;
  const Param *ranksParam() const; // the single Ranks parameter, or null
};

/// How a clause picks the ranks of a name's contributors or destinations
/// (Vocabulary.h RoleKind): every rank; a coordinate whose extent is the
/// rank count; an expression of parameters; a map of the coordinates; a
/// set.
struct RankRole {
  enum Kind {
    Every = (int)RoleKind::Every,
    Coord = (int)RoleKind::Coord,
    Fixed = (int)RoleKind::Fixed,
    Map = (int)RoleKind::Map,
    Set = (int)RoleKind::Set
  } kind = Every;
  int dim = -1; // Coord: the dim whose coordinate is the rank
  Expr fixed;   // Fixed: an expression of parameters
};
RankRole rankRole(const Collective &coll, const Clause &c, const RankSel &sel);
/// Whether a clause's selectors are maps or sets (the executor's general
/// enumeration of names by groups, exec/Groups.h).
bool isGeneralClause(const Collective &coll, const Clause &c);
/// Bit d: coordinate d is a rank coordinate (a rank selector mentions it).
unsigned rankDims(const Clause &c);
/// Whether clause `k` reads an output (a step of a multi-step collective).
bool readsOutput(const Collective &c, size_t k);

/// A problem found in a collective, at a place in its source.
struct Diag {
  SrcLoc loc;
  std::string message;
};

/// Structural rules that need no parameter values: names defined once and
/// known where used, roles of buffers, rank selectors of an allowed form,
/// indexes affine in the dims, a copy with one contributor, matching element
/// types. Appends a Diag per violation; returns true when there is none.
bool checkStructure(const Collective &c, std::vector<Diag> &diags);

/// Parameter values. R and every scalar are in `scalars`; tables are
/// row-major; `dtype` binds every Type parameter.
struct Binding {
  std::map<std::string, int64_t> scalars;
  std::map<std::string, std::vector<int64_t>> tables;
  DType dtype = DType::F32;   // binds every Type parameter
  RedOp redop = RedOp::Sum;   // binds every Op parameter
  int64_t ranks(const Collective &c) const;
};

/// Checks the binding itself (every parameter bound, R >= 1, counts >= 0,
/// 0 <= root < R, table shapes and bounds) and then, by visiting every name,
/// the rules that need values: maps inside their buffers, contributor and
/// destination ranks in [0, R), no two names written to one place. Visiting
/// stops after `maxNames` names (0: no limit).
bool checkBinding(const Collective &c, const Binding &b,
                  std::vector<Diag> &diags, int64_t maxNames = 0);

/// Adds the values bound at compile time (Param::bound) to `b`.
bool applyBoundParams(const Collective &c, Binding &b, std::string &error);

/// The op of clause `cl` under `b`.
RedOp clauseOp(const Clause &cl, const Binding &b);

/// A few bindings of small values (R of 1, 2, 3 and 5, and 4 and 6 where a
/// group size divides them, counts of 1 to 3, roots at both ends, every
/// group size, tables filled pseudo-randomly within their bounds)
/// used to verify a collective whose parameters are symbolic. Parameters
/// bound at compile time keep their values.
std::vector<Binding> sampleBindings(const Collective &c);

/// The divisors of n, ascending: the group sizes a binding of R = n may take.
std::vector<int64_t> divisors(int64_t n);

/// Evaluates an expression of parameters under a binding.
bool evalParamExpr(const Collective &c, const Binding &b, const Expr &e,
                   int64_t &out, std::string &error);

/// Elements per rank of buffer `i` under `b`.
bool bufferElems(const Collective &c, const Binding &b, int i, int64_t &out,
                 std::string &error);

/// The concrete element type buffer `b` declares (`x: i32[C]`); false where
/// it names a `type` parameter (or nothing known).
bool declaredDType(const Collective &c, const Buffer &b, DType &t);
/// Whether buffer `name` is read or written by a clause's names (it is
/// communicated), not only by an epilogue's statements.
bool clauseBuffer(const Collective &c, const std::string &name);
/// The collective's element type where its communicated buffers declare a
/// concrete one (`x: i32[C]`), with the buffer that says so; false where
/// they use a `type` parameter. An epilogue's own inputs and outputs may
/// declare other (floating) types: they are not the collective's.
bool clauseDType(const Collective &c, DType &t, const Buffer **which = nullptr);
/// Buffer `i`'s element type under `b`: its own concrete type, else the
/// value of its `type` parameter (b.dtype).
DType bufferDType(const Collective &c, const Binding &b, int i);

/// A collective compiled under a binding: every expression resolved to
/// slots, ready to visit names fast. Slots hold the scalar parameters first,
/// then the coordinates of the clause being visited.
class BoundCollective {
public:
  struct BoundClause {
    int ndims = 0;
    std::vector<CompiledExpr> extent;
    // A rank selector's rank (of the coordinates and, in a set, of the
    // variable in slot varSlot + side) and a set's extent.
    CompiledExpr fromRank, toRank, fromIndex, toIndex, fromCount, toCount;
    bool fromEvery = false, toEvery = false, fromSet = false, toSet = false;
    int fromBuf = -1, toBuf = -1;
    RedOp op = RedOp::Copy;
  };
  bool init(const Collective &c, const Binding &b, std::string &error);

  const Collective *coll = nullptr;
  Binding binding;
  int64_t R = 0;
  DType dtype = DType::F32;        // the communicated buffers' type
  std::vector<int64_t> bufElems;
  std::vector<DType> bufDType;     // each buffer's (bufferDType)
  std::vector<BoundClause> clauses;
  int dimSlot0 = 0;                // slot of a clause's first coordinate
  int varSlot = 0;                 // slots of the from and to set variables
  std::vector<int64_t> slots;      // scalar values, then room for coordinates
                                   // and the two set variables

  /// Calls `f(slots)` for every name of clause `ci` in row-major order of its
  /// dims, coordinates in slots[dimSlot0 ...]. Stops and returns false when
  /// `f` returns false or an extent fails to evaluate (then sets `error`).
  bool visit(int ci, const std::function<bool(const int64_t *)> &f,
             std::string &error);

  /// The ranks of a name's contributors (`from`) or destinations, in the
  /// order the selector lists them (duplicates kept), for the slots a visit
  /// passes; false when an expression fails to evaluate.
  bool ranksOf(int ci, bool from, const int64_t *s, std::vector<int64_t> &out) const;

private:
  std::vector<CompiledExpr::Table> tables_;
  std::map<std::string, int> tableIndex_;
  mutable std::vector<int64_t> tmp_; // ranksOf's slots
};

/// The plain description: a line-based text form of a Collective.
std::string writeDesc(const Collective &c);
bool readDesc(const std::string &text, Collective &out, std::string &error);

/// Parses "R=8,C=1024,root=0,T=bf16,op=max,cnt=1:2:3:4" style bindings (tables as
/// ':'-separated row-major values). Unmentioned parameters are left unbound.
bool parseBindingList(const Collective &c, const std::string &text, Binding &b,
                      std::string &error);

} // namespace purlin
