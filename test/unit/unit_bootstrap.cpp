// The multi-process bootstrap (runtime/bootstrap): forks N processes that
// meet through a unique id over TCP (or the application's callbacks, here a
// hub in the parent over socket pairs) and exchange byte blobs, as the
// ranks of a one-process-per-GPU communicator do; and file descriptors
// passed over Unix-domain sockets (SCM_RIGHTS). Checks the contents, sizes
// 0 .. 1 MiB, many rounds, a rank that never arrives (named, within the
// timeout), a rank that dies, a missing rank 0, a mismatched rank count, bad
// arguments, fds read through on the receiving side, and purlinCommSplit's
// grouping.
#include "Bootstrap.h"
#include "FdPassing.h"
#include "check.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace purlin::rt;

/// Rank r's blob of round k: size varies by rank and round, 0 included.
static std::string blob(int k, int r) {
  size_t n = k == 0   ? 0
             : k == 1 ? (size_t)(1 << 20) + r
                      : (size_t)(k * 37 + r * 11) % 300;
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i)
    s[i] = (char)((i * 131 + k * 7 + r * 13) & 0xff);
  return s;
}

/// Runs fn(rank) in R forked processes (skipping `absent`); their exit
/// statuses (0 = passed), -1 for the absent rank, and the wall time.
static std::vector<int> forkRanks(int R, const std::function<int(int)> &fn,
                                  int absent = -1, double *seconds = nullptr) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<pid_t> pids(R, -1);
  for (int r = 0; r < R; ++r) {
    if (r == absent)
      continue;
    pid_t p = fork();
    if (p == 0) {
      std::fflush(stdout);
      _exit(fn(r));
    }
    pids[r] = p;
  }
  std::vector<int> st(R, -1);
  for (int r = 0; r < R; ++r) {
    if (pids[r] < 0)
      continue;
    int s = 0;
    waitpid(pids[r], &s, 0);
    st[r] = WIFEXITED(s) ? WEXITSTATUS(s) : 100;
  }
  if (seconds)
    *seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
  return st;
}

static bool has(const std::string &s, const char *what) {
  if (s.find(what) != std::string::npos)
    return true;
  std::fprintf(stderr, "message '%s' lacks '%s'\n", s.c_str(), what);
  return false;
}

/// `rounds` exchanges, checked, then barriers.
static int exchangeRounds(Bootstrap &b, int rounds) {
  std::string err;
  const int R = b.size(), r = b.rank();
  for (int k = 0; k < rounds; ++k) {
    std::vector<std::string> out;
    if (!b.allGather(blob(k, r), out, err)) {
      std::fprintf(stderr, "rank %d round %d: %s\n", r, k, err.c_str());
      return 2;
    }
    if ((int)out.size() != R)
      return 3;
    for (int q = 0; q < R; ++q)
      if (out[q] != blob(k, q))
        return 4;
  }
  for (int k = 0; k < 3; ++k)
    if (!b.barrier(err))
      return 5;
  return 0;
}

static void testTcp(int R, int rounds) {
  purlin_test::Context c("tcp R=" + std::to_string(R));
  char id[kUniqueIdBytes];
  std::string err;
  CHECK(makeUniqueId(id, err));
  CHECK(uniqueIdNonce(id) != 0);
  for (int s : forkRanks(R, [&](int r) {
         auto b = connectTcp(id, r, R, 20000, err);
         if (!b) {
           std::fprintf(stderr, "rank %d: %s\n", r, err.c_str());
           return 1;
         }
         return exchangeRounds(*b, rounds);
       }))
    CHECK_EQ(s, 0);
}

/// Whether an error's list of ranks ("rank 2 of 4", "ranks 1, 2 of 4")
/// names rank r.
static bool names(const std::string &e, int r) {
  std::string x = " " + std::to_string(r);
  if (e.find(x + " of ") != std::string::npos ||
      e.find(x + ", ") != std::string::npos)
    return true;
  std::fprintf(stderr, "message '%s' does not name rank %d\n", e.c_str(), r);
  return false;
}

/// Rank 2 of 4 never starts: every other rank's first exchange fails
/// within the timeout, naming rank 2 (a loaded machine may make another
/// rank late too: it may be named beside it).
static void testNeverArrives() {
  char id[kUniqueIdBytes];
  std::string err;
  CHECK(makeUniqueId(id, err));
  double secs = 0;
  auto st = forkRanks(
      4,
      [&](int r) {
        auto b = connectTcp(id, r, 4, 1500, err);
        if (r == 0)
          return !b && has(err, "of 4 did not arrive within 1500 ms") &&
                         names(err, 2)
                     ? 0
                     : 1;
        std::vector<std::string> out;
        if (b && b->allGather("x", out, err))
          return 2;
        return has(err, "did not arrive") && names(err, 2) ? 0 : 3;
      },
      2, &secs);
  CHECK_EQ(st[0], 0);
  CHECK_EQ(st[1], 0);
  CHECK_EQ(st[3], 0);
  CHECK(secs < 10); // the timeout, not a hang
}

/// Rank 2 of 3 exits after one exchange: the next fails for the others,
/// naming it, at once (not after the timeout); later calls fail at once.
static void testRankDies() {
  char id[kUniqueIdBytes];
  std::string err;
  CHECK(makeUniqueId(id, err));
  double secs = 0;
  auto st = forkRanks(
      3,
      [&](int r) {
        auto b = connectTcp(id, r, 3, 30000, err);
        std::vector<std::string> out;
        if (!b || !b->allGather("a", out, err))
          return 1;
        if (r == 2)
          _exit(0); // gone, without a word
        if (b->allGather("b", out, err))
          return 2;
        if (!has(err, "rank 2 closed its connection"))
          return 3;
        if (b->allGather("c", out, err) || !has(err, "unusable"))
          return 4;
        return 0;
      },
      -1, &secs);
  for (int s : st)
    CHECK_EQ(s, 0);
  CHECK(secs < 10);
}

/// Rank 0 never joins: rank 1's first exchange times out naming rank 0.
static void testNoRoot() {
  char id[kUniqueIdBytes];
  std::string err;
  CHECK(makeUniqueId(id, err));
  auto st = forkRanks(
      2,
      [&](int r) {
        auto b = connectTcp(id, r, 2, 300, err);
        std::vector<std::string> out;
        if (!b || b->allGather("x", out, err))
          return 1;
        return has(err, "no answer from rank 0 within 600 ms") ? 0 : 2;
      },
      0);
  CHECK_EQ(st[1], 0);
}

/// Rank 1 says the job has 3 ranks, rank 0 2: both fail, with both numbers.
static void testMismatchedSize() {
  char id[kUniqueIdBytes];
  std::string err;
  CHECK(makeUniqueId(id, err));
  auto st = forkRanks(2, [&](int r) {
    auto b = connectTcp(id, r, r == 0 ? 2 : 3, 2000, err);
    if (r == 0)
      return !b && has(err, "rank 1 says the job has 3 ranks, rank 0 2") ? 0
                                                                         : 1;
    std::vector<std::string> out;
    if (!b || b->allGather("x", out, err))
      return 2;
    return has(err, "says the job has 3 ranks") ? 0 : 3;
  });
  for (int s : st)
    CHECK_EQ(s, 0);
}

static void testBadArguments() {
  std::string err;
  char id[kUniqueIdBytes] = {0};
  CHECK(!connectTcp(id, 0, 2, 100, err));
  CHECK(err.find("not a unique id") != std::string::npos);
  CHECK_EQ(uniqueIdNonce(id), 0u);
  CHECK(makeUniqueId(id, err));
  CHECK(!connectTcp(id, 2, 2, 100, err));
  CHECK(err.find("rank 2 of 2") != std::string::npos);
  CHECK(!connectTcp(id, -1, 2, 100, err));
  CHECK(!connectTcp(id, 0, 2, 0, err));
  CHECK(err.find("timeout") != std::string::npos);
  // Rank 0 of an id this process did not make (or used already).
  char other[kUniqueIdBytes];
  std::memcpy(other, id, sizeof other);
  other[16] ^= 1; // the nonce
  CHECK(!connectTcp(other, 0, 1, 100, err));
  CHECK(err.find("process that made the id") != std::string::npos);
  auto one = connectTcp(id, 0, 1, 100, err); // a job of one
  CHECK(one != nullptr);
  if (one)
    CHECK_EQ(exchangeRounds(*one, 3), 0);
  CHECK(!connectTcp(id, 0, 1, 100, err)); // the id is used up
  setenv("PURLIN_BOOTSTRAP_ADDR", "not-an-address", 1);
  CHECK(!makeUniqueId(id, err));
  CHECK(err.find("PURLIN_BOOTSTRAP_ADDR") != std::string::npos);
  unsetenv("PURLIN_BOOTSTRAP_ADDR");
  BootstrapCallbacks none{nullptr, nullptr, nullptr};
  CHECK(!fromCallbacks(none, 0, 1, err));
  CHECK(err.find("allgather callback is null") != std::string::npos);
  unsetenv("PURLIN_BOOTSTRAP_TIMEOUT_MS");
  CHECK_EQ(bootstrapTimeoutMs(), 60000);
  setenv("PURLIN_BOOTSTRAP_TIMEOUT_MS", "1500", 1);
  CHECK_EQ(bootstrapTimeoutMs(), 1500);
  setenv("PURLIN_BOOTSTRAP_TIMEOUT_MS", "-3", 1);
  CHECK_EQ(bootstrapTimeoutMs(), 60000);
  unsetenv("PURLIN_BOOTSTRAP_TIMEOUT_MS");
}

// ---- The callback form: the parent is the application's hub -------------
static int gHub = -1; // this child's end of its socket pair

static bool rw(int fd, const void *p, size_t n, bool wr) {
  char *c = const_cast<char *>(static_cast<const char *>(p));
  while (n > 0) {
    ssize_t k = wr ? write(fd, c, n) : read(fd, c, n);
    if (k <= 0)
      return false;
    c += k;
    n -= (size_t)k;
  }
  return true;
}

/// MPI_Allgather through the hub: send (bytes, block), read R blocks.
static int hubAllgather(const void *send, void *recv, size_t bytes, void *ctx) {
  int R = *(int *)ctx;
  uint64_t n = bytes;
  if (!rw(gHub, &n, 8, true) || !rw(gHub, send, bytes, true))
    return 1;
  return rw(gHub, recv, bytes * R, false) ? 0 : 1;
}
static int gBarriers = 0;
static int hubBarrier(void *ctx) {
  ++gBarriers;
  char x = 1, all[64];
  return hubAllgather(&x, all, 1, ctx);
}

static void testCallbacks(int R, bool withBarrier) {
  purlin_test::Context c("callbacks R=" + std::to_string(R));
  std::vector<int> child(R), mine(R);
  for (int r = 0; r < R; ++r) {
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    child[r] = sv[0];
    mine[r] = sv[1];
  }
  std::vector<pid_t> pids;
  for (int r = 0; r < R; ++r) {
    pid_t p = fork();
    if (p == 0) {
      for (int q = 0; q < R; ++q) {
        close(mine[q]);
        if (q != r)
          close(child[q]);
      }
      gHub = child[r];
      int n = R;
      BootstrapCallbacks cb{hubAllgather, withBarrier ? hubBarrier : nullptr,
                            &n};
      std::string err;
      auto b = fromCallbacks(cb, r, R, err);
      if (!b)
        _exit(1);
      int st = exchangeRounds(*b, 6);
      if (st == 0 && withBarrier && gBarriers != 3)
        st = 7;
      _exit(st);
    }
    pids.push_back(p);
  }
  for (int r = 0; r < R; ++r)
    close(child[r]);
  // The hub: one block from each rank, then all of them to each.
  for (;;) {
    std::string all;
    uint64_t n0 = 0;
    bool done = false;
    for (int r = 0; r < R && !done; ++r) {
      uint64_t n = 0;
      if (!rw(mine[r], &n, 8, false)) {
        done = true;
        break;
      }
      if (r == 0)
        n0 = n;
      CHECK_EQ(n, n0); // every rank passes the same block size
      std::string s(n, '\0');
      CHECK(rw(mine[r], &s[0], n, false));
      all += s;
    }
    if (done)
      break;
    for (int r = 0; r < R; ++r)
      rw(mine[r], &all[0], all.size(), true);
  }
  for (int r = 0; r < R; ++r) {
    close(mine[r]);
    int s = 0;
    waitpid(pids[r], &s, 0);
    CHECK(WIFEXITED(s) && WEXITSTATUS(s) == 0);
  }
}

/// Each rank makes a memfd holding "rank r, tag t", publishes its channel's
/// name through the TCP bootstrap and exchanges the fd (two tags, the second
/// sent before the first is received); reads its peers' through theirs.
static void testFdPassing(int R) {
  purlin_test::Context c("fd R=" + std::to_string(R));
  char id[kUniqueIdBytes];
  std::string err;
  CHECK(makeUniqueId(id, err));
  for (int s : forkRanks(R, [&](int r) {
         auto b = connectTcp(id, r, R, 20000, err);
         FdChannel ch;
         if (!b || !ch.open(r, uniqueIdNonce(id), err))
           return 1;
         std::vector<std::string> names;
         if (!b->allGather(ch.name(), names, err))
           return 2;
         int fds[2];
         for (int t = 0; t < 2; ++t) {
           fds[t] = memfd_create("purlin-test", MFD_CLOEXEC);
           std::string text =
               "rank " + std::to_string(r) + ", tag " + std::to_string(t);
           if (fds[t] < 0 ||
               write(fds[t], text.data(), text.size()) != (ssize_t)text.size())
             return 3;
         }
         // Tag 1 goes out before anyone receives tag 0.
         for (int q = 0; q < R; ++q)
           if (q != r && !ch.send(names[q], 1, fds[1], err))
             return 4;
         std::vector<int> got;
         if (!ch.exchange(names, 0, fds[0], 5000, got, err))
           return 5;
         for (int t = 0; t < 2; ++t)
           for (int q = 0; q < R; ++q) {
             if (q == r)
               continue;
             int fd = got[q];
             if (t == 1 && !ch.receive(q, 1, 5000, fd, err))
               return 6;
             char buf[64] = {0};
             std::string want =
                 "rank " + std::to_string(q) + ", tag " + std::to_string(t);
             if (pread(fd, buf, sizeof buf - 1, 0) != (ssize_t)want.size() ||
                 want != buf)
               return 7;
             close(fd);
           }
         // Nobody sends tag 9: a timeout naming the rank.
         int fd = -1;
         if (R > 1 &&
             (ch.receive((r + 1) % R, 9, 100, fd, err) ||
              !has(err, ("from rank " + std::to_string((r + 1) % R)).c_str())))
           return 8;
         return b->barrier(err) ? 0 : 9;
       }))
    CHECK_EQ(s, 0);
  FdChannel ch;
  CHECK(ch.open(0, 1, err));
  int fd = -1;
  CHECK(!ch.send("purlin-no-such-channel", 0, 0, err));
  CHECK(err.find("connecting to @purlin-no-such-channel") != std::string::npos);
  CHECK(!ch.receive(3, 0, 50, fd, err));
}

/// purlinCommSplit's grouping (ncclCommSplit): by color, ordered by key,
/// ties by rank; a negative color: no group.
static void testSplitGroup() {
  int nr = -2;
  // 8 ranks, colors r % 2, keys -r: each group reversed.
  std::vector<int> colors, keys;
  for (int r = 0; r < 8; ++r) {
    colors.push_back(r % 2);
    keys.push_back(-r);
  }
  CHECK((splitGroup(colors, keys, 0, nr) == std::vector<int>{6, 4, 2, 0}));
  CHECK_EQ(nr, 3);
  CHECK((splitGroup(colors, keys, 5, nr) == std::vector<int>{7, 5, 3, 1}));
  CHECK_EQ(nr, 1);
  // Equal keys: by rank; no color: nothing.
  colors = {3, 3, -1, 3, 0};
  keys = {7, 7, 7, 1, 7};
  CHECK((splitGroup(colors, keys, 1, nr) == std::vector<int>{3, 0, 1}));
  CHECK_EQ(nr, 2);
  CHECK(splitGroup(colors, keys, 2, nr).empty());
  CHECK_EQ(nr, -1);
  CHECK((splitGroup(colors, keys, 4, nr) == std::vector<int>{4}));
  CHECK_EQ(nr, 0);
  CHECK(splitGroup(colors, keys, 9, nr).empty());
}

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  testBadArguments();
  testSplitGroup();
  for (int R : {1, 2, 5, 8})
    testTcp(R, 5);
  testTcp(32, 3);
  testNeverArrives();
  testRankDies();
  testNoRoot();
  testMismatchedSize();
  testCallbacks(1, false);
  testCallbacks(4, false);
  testCallbacks(3, true);
  testFdPassing(2);
  testFdPassing(4);
  return purlin_test::finish();
}
