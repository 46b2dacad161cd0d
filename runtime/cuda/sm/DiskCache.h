// The disk cache of cubins compiled at first use (Jit.h): one file per
// program, named by a hash of what went into it (the program's text, the
// headers it includes, NVRTC's options and version), so that a changed
// source, atom or compiler never reads a stale cubin.
//
// Where: PURLIN_CACHE_DIR, else $XDG_CACHE_HOME/purlin, else
// $HOME/.cache/purlin; PURLIN_CACHE_DIR=none keeps cubins in memory only.
// Files are written to a temporary name and renamed, so that processes
// compiling the same program at once never read half a file.
#pragma once

#include <string>

namespace purlin {
namespace rt {
namespace sm {

/// A 128-bit hash of `text`, as 32 hex digits.
std::string contentHash(const std::string &text);

/// The cache folder ("" when none: PURLIN_CACHE_DIR=none, no home).
std::string cacheDir();

/// Reads file `name` of the cache into `data`; false when absent.
bool cacheRead(const std::string &name, std::string &data);

/// Writes `data` as file `name` of the cache (creating the folder); false
/// (and nothing written) when it cannot.
bool cacheWrite(const std::string &name, const std::string &data);

} // namespace sm
} // namespace rt
} // namespace purlin
