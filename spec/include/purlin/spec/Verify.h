// Verification of a collective, shared by purlinc (on the parsed source) and
// the layout dialect's verifier (on the IR): the rules themselves are the
// core's checkStructure and checkBinding; this file only decides which
// bindings to check them under and keeps that enumeration bounded.
#pragma once

#include "purlin/spec/Collective.h"

#include <vector>

namespace purlin {

/// The most buffer elements (over all ranks) or names that verification
/// enumerates under one binding. Larger bindings are skipped with a warning.
constexpr int64_t kMaxVerifyElements = int64_t(1) << 24;

/// Runs checkStructure; when it passes, runs checkBinding under every binding
/// of sampleBindings(c) (parameters bound at compile time keep their value)
/// and reports the problems of the first binding that fails. Appends to
/// `errors` and `warnings`; returns true when there is no error.
/// @post never allocates or visits more than about kMaxVerifyElements per
/// binding, whatever the collective says.
bool verifyCollective(const Collective &c, std::vector<Diag> &errors,
                      std::vector<Diag> &warnings);

} // namespace purlin
