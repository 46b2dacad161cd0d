// The disk cache of cubins compiled at first use (Jit.h): one file per
// program, named by a hash of what went into it (the program's text, the
// headers it includes, NVRTC's options and version), so that a changed
// source, atom or compiler never reads a stale cubin.
//
// Where: PURLIN_CACHE_DIR, else $XDG_CACHE_HOME/purlin, else
// $HOME/.cache/purlin; PURLIN_CACHE_DIR=none keeps cubins in memory only.
// Files are written to a temporary name and renamed, so that processes
// compiling the same program at once never read half a file; and a
// process about to compile a program first takes its lock (CacheLock), so
// that the processes of a job that start together (one a GPU, each wanting
// the same kernels) compile it once: the others wait, then read its cubin.
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

/// Held while this process compiles the program of cache file `name`: an
/// exclusive flock on `.NAME.lock` in the cache folder, taken at
/// construction, waiting up to `waitSeconds` for a process that holds it
/// (a lock whose holder died is free at once: the kernel drops it). Not
/// held (and nothing waited for) without a cache folder, on any error, or
/// past the wait: the caller then compiles anyway, as without the lock. The
/// caller reads the cache again once it holds the lock: the holder it
/// waited for has written the cubin.
class CacheLock {
public:
  explicit CacheLock(const std::string &name, double waitSeconds = 300);
  ~CacheLock();
  CacheLock(const CacheLock &) = delete;
  CacheLock &operator=(const CacheLock &) = delete;
  bool held() const { return fd_ >= 0; }

private:
  int fd_ = -1;
};

} // namespace sm
} // namespace rt
} // namespace purlin
