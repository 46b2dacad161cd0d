"""User-written collectives the tests compile (host and GPU tests share the
text, so a GPU machine without purlinc finds them in a carried cache)."""

# rank r's input lands on rank R-1-r, elements reversed
REVERSE = """
collective reverse_ranks(R: ranks, C: count, T: type) {
  in  x: T[C];
  out y: T[C];
  name (r, i) in [R, C]: x@r[i] -> y@(R - 1 - r)[C - 1 - i] copy;
}
"""

# every rank: the reduction of the inputs at the even places of y
EVEN_SUM = """
collective reduce_spread(R: ranks, C: count, T: type, op: redop) {
  in  x: T[C];
  out y: T[2*C];
  name i in [C]: x@*[i] -> y@*[2*i] reduce(op);
}
"""
