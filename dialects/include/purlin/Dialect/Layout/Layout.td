// The layout dialect, umbrella file: the collective as layout naming.
#ifndef PURLIN_DIALECT_LAYOUT_TD
#define PURLIN_DIALECT_LAYOUT_TD

include "purlin/Dialect/Layout/LayoutDialect.td"
include "purlin/Dialect/Layout/LayoutAttrs.td"
include "purlin/Dialect/Layout/LayoutOps.td"

#endif // PURLIN_DIALECT_LAYOUT_TD
