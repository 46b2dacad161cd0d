// The first-use cubin cache's lock across processes
// (runtime/cuda/sm/DiskCache.h, CacheLock): processes that start together
// and want the same program compile it once, the others wait and read the
// cubin it wrote; a holder that dies frees the lock; a hung holder costs at
// most the wait; no cache folder, no lock. Plain C++ (the cache is), so CI
// runs it without a GPU; the "compile" here is a sleep and a write, as
// runtime/cuda/sm/Jit.cpp's build() does around NVRTC.
#include "check.h"

#include "DiskCache.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

using purlin::rt::sm::CacheLock;
using purlin::rt::sm::cacheRead;
using purlin::rt::sm::cacheWrite;

namespace {
std::string gDir;

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

/// What Jit.cpp's build() does, with a 300 ms "compile" that logs a line
/// to `log` (O_APPEND: one write per line, whole). Returns 0 when the
/// process ends with the program's bytes.
int buildLike(const std::string &name, const std::string &log) {
  std::string data;
  if (cacheRead(name, data))
    return data == "cubin of " + name ? 0 : 1;
  CacheLock lock(name);
  if (lock.held() && cacheRead(name, data))
    return data == "cubin of " + name ? 0 : 2;
  const int fd = open(log.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  const std::string line = "compiled by " + std::to_string(getpid()) + "\n";
  if (fd < 0 || write(fd, line.data(), line.size()) != (ssize_t)line.size())
    return 3;
  close(fd);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  if (!cacheWrite(name, "cubin of " + name))
    return 4;
  return cacheRead(name, data) && data == "cubin of " + name ? 0 : 5;
}

int countLines(const std::string &file) {
  std::ifstream f(file);
  std::string l;
  int n = 0;
  while (std::getline(f, l))
    ++n;
  return n;
}

/// Forks n processes running fn; the number that exited 0.
template <class F> int forkAll(int n, F fn) {
  std::vector<pid_t> kids;
  for (int i = 0; i < n; ++i) {
    const pid_t p = fork();
    if (p == 0)
      _exit(fn(i));
    kids.push_back(p);
  }
  int ok = 0;
  for (pid_t p : kids) {
    int st = 0;
    waitpid(p, &st, 0);
    ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
  }
  return ok;
}
} // namespace

int main() {
  char tmpl[] = "/tmp/purlin-unit-diskcache-XXXXXX";
  const char *d = mkdtemp(tmpl);
  CHECK(d != nullptr);
  if (!d)
    return purlin_test::finish();
  gDir = d;
  setenv("PURLIN_CACHE_DIR", (gDir + "/cache").c_str(), 1);

  // 8 processes at once, one program: one compile, every process ends with
  // its cubin.
  {
    const std::string log = gDir + "/compiles-a";
    const auto t = std::chrono::steady_clock::now();
    CHECK_EQ(forkAll(8, [&](int) { return buildLike("prog-a.cubin", log); }), 8);
    CHECK_EQ(countLines(log), 1);
    CHECK(secondsSince(t) < 10.0);
  }
  // Three programs, 9 processes (three each): one compile a program.
  {
    const std::string log = gDir + "/compiles-b";
    CHECK_EQ(forkAll(9, [&](int i) {
               return buildLike("prog-b" + std::to_string(i % 3) + ".cubin", log);
             }),
             9);
    CHECK_EQ(countLines(log), 3);
  }
  // A holder that dies without unlocking: the next process takes the lock
  // at once.
  {
    CHECK_EQ(forkAll(1, [&](int) {
               CacheLock l("prog-c.cubin");
               _exit(l.held() ? 0 : 1); // no destructor: the process's death frees it
               return 1;
             }),
             1);
    const auto t = std::chrono::steady_clock::now();
    CacheLock l("prog-c.cubin", 5);
    CHECK(l.held());
    CHECK(secondsSince(t) < 1.0);
  }
  // A holder that does not let go: a waiter gives up after its wait (and
  // its caller compiles without the lock).
  {
    CacheLock held("prog-d.cubin");
    CHECK(held.held());
    CHECK_EQ(forkAll(1, [&](int) {
               const auto t = std::chrono::steady_clock::now();
               CacheLock l("prog-d.cubin", 0.3);
               const double s = secondsSince(t);
               return !l.held() && s >= 0.25 && s < 3.0 ? 0 : 1;
             }),
             1);
  }
  // No cache folder: nothing held, nothing waited for.
  {
    setenv("PURLIN_CACHE_DIR", "none", 1);
    const auto t = std::chrono::steady_clock::now();
    CacheLock l("prog-e.cubin", 5);
    CHECK(!l.held());
    CHECK(secondsSince(t) < 0.5);
  }
  std::string cmd = "rm -rf '" + gDir + "'";
  CHECK_EQ(std::system(cmd.c_str()), 0);
  return purlin_test::finish();
}
