// The recursive-descent parser of the `.purlin` language (grammar in
// docs/language.md). It builds a purlin::Collective with a SrcLoc on every
// parameter, buffer, clause, coordinate, access and op, and stops at the
// first syntax error. Expressions are parsed by the spec's one parser of
// their grammar (purlin/spec/ExprParse.h: depth limit, literal range and
// messages included), over this parser's tokens. Semantic rules are not checked here: they belong to
// checkStructure / checkBinding (see purlin/spec/Verify.h).
#pragma once

#include "purlin/spec/Collective.h"

#include <string>

namespace purlin {

/// Parses `text`; returns false and fills `error` (a Diag at the offending
/// token) on a syntax error. Total on every input: no crash, no unbounded
/// recursion, no hang.
bool parsePurlin(const std::string &text, Collective &out, Diag &error);

} // namespace purlin
