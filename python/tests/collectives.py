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

# an epilogue whose own buffers have other types than the communicated T:
# an f32 scale in, the normalized value out in f16 (docs/language.md,
# "Epilogues"; examples/all_reduce_rmsnorm_fp8.purlin stores f8e4m3)
NORM_SCALED = """
collective norm_scaled(R: ranks, N: count, H: count, T: type) {
  in  x: T[N*H];
  in  scale: f32[1];
  out y: T[N*H];
  out q: f16[N*H];
  name (n, i) in [N, H]: x@*[n*H + i] -> y@*[n*H + i] reduce(sum)
  rows (n) {
    y[n*H + i] = recv;
    q[n*H + i] = recv / sqrt(rowsum(recv*recv) / H + 1) / scale[0];
  }
}
"""
