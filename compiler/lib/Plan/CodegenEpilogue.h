// Atom lowering of an epilogue (exec/Epilogue.h): the struct of one
// clause's epilogue, its statements per element and pass, its row
// reductions and its row-uniform values. Part of Codegen.cpp's output.
#pragma once

#include "purlin/spec/Collective.h"

#include <functional>
#include <ostream>
#include <string>

namespace purlin {

/// Prints clause k's `Epilogue<k>` struct to os; `index` prints an integer
/// expression of the clause as C++ (coordinates c[d], scalars P.s[j]).
void emitEpilogue(std::ostream &os, const Collective &c, size_t k,
                  const std::function<std::string(const Expr &)> &index);

} // namespace purlin
