// The snac dialect, umbrella file: per-rank orchestration of Stage, Notify
// And Consume, inferred from the layout dialect.
#ifndef PURLIN_DIALECT_SNAC_TD
#define PURLIN_DIALECT_SNAC_TD

include "purlin/Dialect/Snac/SnacDialect.td"
include "purlin/Dialect/Snac/SnacOps.td"

#endif // PURLIN_DIALECT_SNAC_TD
