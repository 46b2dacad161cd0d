// The multi-process bootstrap (runtime/bootstrap/Bootstrap.h): forks N
// processes that exchange byte blobs through a directory, as the ranks of a
// one-process-per-GPU communicator do with their cudaIpc handles. Checks the
// contents, sizes 0 .. 1 MiB, many rounds, a timeout naming the missing
// rank, bad arguments, the environment and that close() leaves nothing.
#include "Bootstrap.h"
#include "check.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using purlin::rt::Bootstrap;

static std::string freshDir(const char *tag) {
  const char *t = std::getenv("TMPDIR");
  std::string base = (t && *t) ? t : "/tmp";
  std::string d = base + "/purlin-bootstrap-" + tag + "-" +
                  std::to_string((long)getpid()) + "-XXXXXX";
  std::vector<char> buf(d.begin(), d.end());
  buf.push_back(0);
  if (!mkdtemp(buf.data()))
    return std::string();
  return std::string(buf.data());
}

static int countEntries(const std::string &d) {
  DIR *p = opendir(d.c_str());
  if (!p)
    return -1;
  int n = 0;
  while (dirent *e = readdir(p))
    if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
      ++n;
  closedir(p);
  return n;
}

/// Rank r's blob of round k: size varies by rank and round, 0 included.
static std::string blob(int k, int r) {
  size_t n = k == 0 ? 0 : (k == 1 ? (size_t)(1 << 20) + r : (size_t)(k * 37 + r * 11) % 300);
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i)
    s[i] = (char)((i * 131 + k * 7 + r * 13) & 0xff);
  return s;
}

/// One rank: `rounds` exchanges, checked; exit status 0 when all matched.
static int rankMain(const std::string &dir, int r, int R, int rounds) {
  Bootstrap b(dir, r, R, 20000);
  std::string err;
  if (!b.init(err)) {
    std::fprintf(stderr, "rank %d: %s\n", r, err.c_str());
    return 2;
  }
  for (int k = 0; k < rounds; ++k) {
    std::vector<std::string> out;
    if (!b.allGather(blob(k, r), out, err)) {
      std::fprintf(stderr, "rank %d: %s\n", r, err.c_str());
      return 3;
    }
    if ((int)out.size() != R)
      return 4;
    for (int q = 0; q < R; ++q)
      if (out[q] != blob(k, q)) {
        std::fprintf(stderr, "rank %d: round %d: rank %d's blob differs\n", r, k, q);
        return 5;
      }
  }
  if (!b.barrier(err) || !b.close(err)) {
    std::fprintf(stderr, "rank %d: %s\n", r, err.c_str());
    return 6;
  }
  return 0;
}

/// Forks R ranks; returns their exit statuses.
static std::vector<int> forkRanks(int R, int (*body)(const std::string &, int, int, int),
                                  const std::string &dir, int rounds) {
  std::vector<pid_t> pids;
  for (int r = 0; r < R; ++r) {
    std::fflush(stdout);
    pid_t p = fork();
    if (p == 0)
      _exit(body(dir, r, R, rounds));
    pids.push_back(p);
  }
  std::vector<int> st;
  for (pid_t p : pids) {
    int s = 0;
    waitpid(p, &s, 0);
    st.push_back(WIFEXITED(s) ? WEXITSTATUS(s) : 100 + (WIFSIGNALED(s) ? WTERMSIG(s) : 0));
  }
  return st;
}

static void testExchange(int R, int rounds) {
  purlin_test::Context c("R=" + std::to_string(R));
  std::string dir = freshDir("x");
  CHECK(!dir.empty());
  for (int s : forkRanks(R, rankMain, dir, rounds))
    CHECK_EQ(s, 0);
  CHECK_EQ(countEntries(dir), 0); // close() removed every file
  rmdir(dir.c_str());
}

/// The directory does not exist yet: the ranks create it (racing), and the
/// last one out removes it.
static void testCreatesDir() {
  std::string dir = freshDir("c");
  rmdir(dir.c_str());
  std::string sub = dir + "-new";
  for (int s : forkRanks(3, rankMain, sub, 3))
    CHECK_EQ(s, 0);
  struct stat st;
  bool gone = stat(sub.c_str(), &st) != 0;
  CHECK(gone || countEntries(sub) == 0);
  rmdir(sub.c_str());
}

/// Rank 2 of 3 never arrives: the others time out, naming it.
static int timeoutRank(const std::string &dir, int r, int R, int) {
  if (r == 2)
    return 0;
  Bootstrap b(dir, r, R, 300);
  std::string err;
  if (!b.init(err))
    return 2;
  std::vector<std::string> out;
  if (b.allGather("x", out, err))
    return 3; // must not succeed
  if (err.find("timed out") == std::string::npos ||
      err.find("no word from rank(s) 2") == std::string::npos) {
    std::fprintf(stderr, "unexpected message: %s\n", err.c_str());
    return 4;
  }
  // Unusable afterwards, with a message.
  if (b.allGather("y", out, err) || err.find("unusable") == std::string::npos)
    return 5;
  return 0;
}

static void testTimeout() {
  std::string dir = freshDir("t");
  for (int s : forkRanks(3, timeoutRank, dir, 0))
    CHECK_EQ(s, 0);
  std::string cmd = "rm -rf '" + dir + "'";
  CHECK_EQ(std::system(cmd.c_str()), 0);
}

static void testBadArguments() {
  std::string err;
  {
    Bootstrap b("/tmp", 3, 3, 100);
    CHECK(!b.init(err));
    CHECK(err.find("not valid") != std::string::npos);
  }
  {
    Bootstrap b("/tmp", 0, 0, 100);
    CHECK(!b.init(err));
  }
  {
    Bootstrap b("", 0, 1, 100);
    CHECK(!b.init(err));
    CHECK(err.find("PURLIN_BOOTSTRAP_DIR") != std::string::npos);
  }
  {
    Bootstrap b("/dev/null/x", 0, 1, 100);
    CHECK(!b.init(err));
  }
  { // One rank: an exchange returns its own blob at once.
    std::string dir = freshDir("1");
    Bootstrap b(dir, 0, 1, 100);
    CHECK(b.init(err));
    std::vector<std::string> out;
    CHECK(b.allGather("alone", out, err));
    CHECK_EQ(out.size(), (size_t)1);
    CHECK_EQ(out[0], std::string("alone"));
    CHECK(b.close(err));
    CHECK_EQ(countEntries(dir), 0);
    rmdir(dir.c_str());
  }
}

static void testEnvironment() {
  std::string err, dir;
  int rank = -1, n = -1;
  int64_t t = 0;
  unsetenv("PURLIN_RANK");
  unsetenv("OMPI_COMM_WORLD_RANK");
  unsetenv("SLURM_PROCID");
  CHECK(!Bootstrap::fromEnvironment(rank, n, dir, t, err));
  CHECK(err.find("PURLIN_RANK") != std::string::npos);
  setenv("PURLIN_RANK", "3", 1);
  setenv("PURLIN_NRANKS", "8", 1);
  setenv("PURLIN_BOOTSTRAP_DIR", "/tmp/job42", 1);
  setenv("PURLIN_BOOTSTRAP_TIMEOUT_MS", "1234", 1);
  rank = n = -1;
  dir.clear();
  CHECK(Bootstrap::fromEnvironment(rank, n, dir, t, err));
  CHECK_EQ(rank, 3);
  CHECK_EQ(n, 8);
  CHECK_EQ(dir, std::string("/tmp/job42"));
  CHECK_EQ(t, (int64_t)1234);
  // Arguments win over the environment.
  rank = 1, n = 2, dir = "/x";
  CHECK(Bootstrap::fromEnvironment(rank, n, dir, t, err));
  CHECK_EQ(rank, 1);
  CHECK_EQ(n, 2);
  CHECK_EQ(dir, std::string("/x"));
  setenv("PURLIN_RANK", "x3", 1);
  rank = -1;
  unsetenv("OMPI_COMM_WORLD_RANK");
  CHECK(!Bootstrap::fromEnvironment(rank, n, dir, t, err));
  unsetenv("PURLIN_RANK");
  unsetenv("PURLIN_NRANKS");
  unsetenv("PURLIN_BOOTSTRAP_DIR");
  unsetenv("PURLIN_BOOTSTRAP_TIMEOUT_MS");
}

int main() {
  testBadArguments();
  testEnvironment();
  for (int R : {1, 2, 4, 8})
    testExchange(R, 12);
  testExchange(16, 4);
  testCreatesDir();
  testTimeout();
  return purlin_test::finish();
}
