/* Numbering.h -- the numbering of element types and reduction ops, defined
 * once. Plain C: the C API (purlin/purlin.h), the spec (DType.h), the
 * executor (Exec.h) and the device atoms (common/sm/elem.cuh) all expand
 * these lists, so no copy of the numbering can drift.
 *
 *   PURLIN_DTYPES(X): X(ENUM, "name", bytes), in numbering order from 0;
 *   PURLIN_REDOPS(X): X(ENUM, Camel, "name"), in numbering order from 0
 *                     (COPY is 0: a copy, not a reduction).
 */
#ifndef PURLIN_SPEC_NUMBERING_H
#define PURLIN_SPEC_NUMBERING_H

#define PURLIN_DTYPES(X)                                                       \
  X(F32, "f32", 4)                                                             \
  X(F16, "f16", 2)                                                             \
  X(BF16, "bf16", 2)                                                           \
  X(F8E4M3, "f8e4m3", 1)                                                       \
  X(F8E5M2, "f8e5m2", 1)                                                       \
  X(I8, "i8", 1)                                                               \
  X(U8, "u8", 1)                                                               \
  X(I32, "i32", 4)                                                             \
  X(I64, "i64", 8)                                                             \
  X(F64, "f64", 8)

#define PURLIN_REDOPS(X)                                                       \
  X(COPY, Copy, "copy")                                                        \
  X(SUM, Sum, "sum")                                                           \
  X(PROD, Prod, "prod")                                                        \
  X(MIN, Min, "min")                                                           \
  X(MAX, Max, "max")                                                           \
  X(AVG, Avg, "avg")

#endif
