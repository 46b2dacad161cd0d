// Symbolic values of the checker: hash-consed terms, so that comparing an
// element's value with the expected one is comparing two integers.
#include "CheckerSim.h"

#include <algorithm>

namespace purlin {
namespace check {

bool Terms::reset(DType t, int R, const std::vector<int64_t> &elems, int launches) {
  dtype_ = t;
  R_ = R;
  nb_ = std::max<int>(1, (int)elems.size());
  maxElems_ = 1;
  for (int64_t n : elems)
    maxElems_ = std::max(maxElems_, n);
  leaves_ = (int64_t)(launches + 2) * R_ * nb_ * maxElems_;
  nodes_.clear();
  kids_.clear();
  table_.assign(1 << 12, -1);
  used_ = 0;
  return leaves_ < (1ll << 30);
}

Terms::Node Terms::node(int id) const {
  if (id >= leaves_)
    return nodes_[id - leaves_];
  Node n;
  int64_t v = id;
  n.off = v % maxElems_;
  v /= maxElems_;
  n.buf = (int16_t)(v % nb_);
  v /= nb_;
  n.rank = (int16_t)(v % R_);
  const int slot = (int)(v / R_);
  n.kind = slot == 0 ? kPoison : kInput;
  n.launch = slot == 0 ? 0 : slot - 1;
  return n;
}

bool Terms::exactFold(int op) const {
  switch ((RedOp)op) {
  case RedOp::Min:
  case RedOp::Max:
    return true; // the result is one of the operands, exactly
  case RedOp::Sum:
  case RedOp::Prod:
    // The accumulator is the element type itself (f32, f64, integers
    // wrapping in their width); narrow floats accumulate in f32.
    return dtype_ == DType::F32 || dtype_ == DType::F64 || dtype_ == DType::I8 ||
           dtype_ == DType::U8 || dtype_ == DType::I32 || dtype_ == DType::I64;
  default:
    return false; // avg divides once at the end; copy combines nothing
  }
}

uint64_t Terms::hash(const Node &n, const int *kids) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  };
  mix(n.kind);
  mix((uint64_t)(uint8_t)n.op);
  mix((uint64_t)n.rank << 16 | (uint64_t)(uint16_t)n.buf);
  mix((uint64_t)n.launch);
  mix((uint64_t)n.off);
  for (int i = 0; i < n.nkids; ++i)
    mix((uint64_t)kids[i]);
  // Finalizer (murmur3's): the table indexes by the low bits.
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

bool Terms::same(int id, const Node &n, const int *kids) const {
  const Node &m = nodes_[id - leaves_];
  if (m.kind != n.kind || m.op != n.op || m.rank != n.rank || m.buf != n.buf ||
      m.launch != n.launch || m.off != n.off || m.nkids != n.nkids)
    return false;
  for (int i = 0; i < n.nkids; ++i)
    if (kids_[m.kid0 + i] != kids[i])
      return false;
  return true;
}

int Terms::intern(const Node &n, const int *kids) {
  if ((used_ + 1) * 2 > table_.size()) {
    std::vector<int> old(table_.size() * 2, -1);
    old.swap(table_);
    for (int id : old)
      if (id >= 0) {
        const Node &m = nodes_[id - leaves_];
        size_t i = hash(m, kids_.data() + m.kid0) & (table_.size() - 1);
        while (table_[i] >= 0)
          i = (i + 1) & (table_.size() - 1);
        table_[i] = id;
      }
  }
  size_t i = hash(n, kids) & (table_.size() - 1);
  for (; table_[i] >= 0; i = (i + 1) & (table_.size() - 1))
    if (same(table_[i], n, kids))
      return table_[i];
  Node m = n;
  m.kid0 = (int32_t)kids_.size();
  kids_.insert(kids_.end(), kids, kids + n.nkids);
  nodes_.push_back(m);
  table_[i] = (int)(leaves_ + (int64_t)nodes_.size() - 1);
  ++used_;
  return table_[i];
}

int Terms::combine(int op, const int *kids, int n) {
  // A copy moves the term; so does any op of one operand (DType.h: one
  // contribution converts to the accumulator and back exactly).
  if (n == 1)
    return kids[0];
  Node c;
  c.kind = kCombine;
  c.op = (int8_t)op;
  // A fold continued from a stored partial result (the first operand is a
  // combination by the same op) is the longer fold, where that is exact.
  if (n > 0 && kids[0] >= leaves_ && nodes_[kids[0] - leaves_].op == op &&
      exactFold(op)) {
    std::vector<int> all(this->kids(kids[0]),
                         this->kids(kids[0]) + nodes_[kids[0] - leaves_].nkids);
    all.insert(all.end(), kids + 1, kids + n);
    if (all.size() == 1)
      return all[0];
    c.nkids = (int32_t)all.size();
    return intern(c, all.data());
  }
  c.nkids = n;
  return intern(c, kids);
}

void Terms::leaves(int id, std::vector<int> &out) const {
  if (id < leaves_) {
    out.push_back(id);
    return;
  }
  const Node &n = nodes_[id - leaves_];
  for (int i = 0; i < n.nkids; ++i)
    leaves(kids_[n.kid0 + i], out);
}

std::string Terms::str(int id, const Collective &c, int launch, int maxLeaves) const {
  const Node n = node(id);
  auto bufName = [&](int b) {
    return b >= 0 && b < (int)c.buffers.size() ? c.buffers[b].name : "?";
  };
  if (n.kind == kInput)
    return bufName(n.buf) + "@" + std::to_string(n.rank) + "[" + std::to_string(n.off) +
           "]" + (n.launch != launch ? " of launch " + std::to_string(n.launch + 1) : "");
  if (n.kind == kPoison)
    return "poison(" + bufName(n.buf) + "@" + std::to_string(n.rank) + "[" +
           std::to_string(n.off) + "])";
  std::string s = std::string(redOpName((RedOp)n.op)) + "(";
  for (int i = 0; i < n.nkids; ++i) {
    if (i == maxLeaves && n.nkids > maxLeaves + 1) {
      s += ", ... " + std::to_string(n.nkids - maxLeaves) + " more";
      break;
    }
    s += (i ? ", " : "") + str(kids_[n.kid0 + i], c, launch, maxLeaves);
  }
  return s + ")";
}

} // namespace check
} // namespace purlin
