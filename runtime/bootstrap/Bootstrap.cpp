#include "Bootstrap.h"

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace purlin {
namespace rt {

namespace {
bool writeAll(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    p += w;
    n -= (size_t)w;
  }
  return true;
}
/// Reads a whole file; false when it does not exist (yet).
bool readFile(const std::string &p, std::string &out, bool &ioError) {
  ioError = false;
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    ioError = errno != ENOENT;
    return false;
  }
  out.clear();
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      ioError = true;
      ::close(fd);
      return false;
    }
    if (n == 0)
      break;
    out.append(buf, (size_t)n);
  }
  ::close(fd);
  return true;
}
bool envInt(const char *name, int &v) {
  const char *s = std::getenv(name);
  if (!s || !*s)
    return false;
  char *end;
  long x = std::strtol(s, &end, 10);
  if (*end)
    return false;
  v = (int)x;
  return true;
}
} // namespace

Bootstrap::Bootstrap(std::string dir, int rank, int nranks, int64_t timeoutMs)
    : dir_(std::move(dir)), rank_(rank), nranks_(nranks),
      timeoutMs_(timeoutMs) {}

Bootstrap::~Bootstrap() {
  std::string e;
  close(e);
}

std::string Bootstrap::path(int64_t round, int rank, bool tmp) const {
  return dir_ + (tmp ? "/." : "/") + std::to_string(round) + "." +
         std::to_string(rank) + (tmp ? ".tmp" : "");
}

bool Bootstrap::init(std::string &error) {
  if (nranks_ < 1 || rank_ < 0 || rank_ >= nranks_) {
    error = "bootstrap: rank " + std::to_string(rank_) + " of " +
            std::to_string(nranks_) + " is not valid";
    broken_ = true;
    return false;
  }
  if (dir_.empty()) {
    error = "bootstrap: no directory (PURLIN_BOOTSTRAP_DIR)";
    broken_ = true;
    return false;
  }
  if (timeoutMs_ <= 0)
    timeoutMs_ = 60000;
  if (::mkdir(dir_.c_str(), 0700) == 0)
    createdDir_ = true;
  else if (errno != EEXIST) {
    error = "bootstrap: creating " + dir_ + ": " + std::strerror(errno);
    broken_ = true;
    return false;
  }
  struct stat st;
  if (::stat(dir_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    error = "bootstrap: " + dir_ + " is not a directory";
    broken_ = true;
    return false;
  }
  return true;
}

bool Bootstrap::allGather(const std::string &mine,
                          std::vector<std::string> &out, std::string &error) {
  if (broken_ || closed_) {
    error = broken_ ? "bootstrap: unusable after an earlier error"
                    : "bootstrap: closed";
    return false;
  }
  const int64_t k = round_;
  // Publish: write a temporary file, then rename it into place.
  std::string tmp = path(k, rank_, true), fin = path(k, rank_);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || !writeAll(fd, mine.data(), mine.size())) {
    error = "bootstrap: writing " + tmp + ": " + std::strerror(errno);
    if (fd >= 0)
      ::close(fd);
    broken_ = true;
    return false;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), fin.c_str()) != 0) {
    error = "bootstrap: renaming " + tmp + ": " + std::strerror(errno);
    broken_ = true;
    return false;
  }
  // Gather, polling with a growing sleep (50 us .. 10 ms).
  out.assign(nranks_, std::string());
  std::vector<bool> have(nranks_, false);
  have[rank_] = true;
  out[rank_] = mine;
  int missing = nranks_ - 1;
  auto t0 = std::chrono::steady_clock::now();
  int64_t sleepUs = 50;
  while (missing > 0) {
    for (int r = 0; r < nranks_; ++r) {
      if (have[r])
        continue;
      bool ioErr = false;
      if (readFile(path(k, r), out[r], ioErr)) {
        have[r] = true;
        --missing;
      } else if (ioErr) {
        error = "bootstrap: reading " + path(k, r) + ": " + std::strerror(errno);
        broken_ = true;
        return false;
      }
    }
    if (missing == 0)
      break;
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - t0)
                  .count();
    if (ms > timeoutMs_) {
      std::string who;
      for (int r = 0, n = 0; r < nranks_; ++r)
        if (!have[r] && n++ < 8)
          who += (who.empty() ? "" : ", ") + std::to_string(r);
      if (missing > 8)
        who += ", ...";
      error = "bootstrap: timed out after " + std::to_string(timeoutMs_) +
              " ms in exchange " + std::to_string(k) + " (rank " +
              std::to_string(rank_) + " of " + std::to_string(nranks_) +
              ", directory " + dir_ + "): no word from rank(s) " + who;
      broken_ = true;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(sleepUs));
    sleepUs = std::min<int64_t>(sleepUs * 2, 10000);
  }
  // Everyone has finished round k-1 (they published round k): drop ours.
  if (k > 0)
    ::unlink(path(k - 1, rank_).c_str());
  ++round_;
  return true;
}

bool Bootstrap::barrier(std::string &error) {
  std::vector<std::string> v;
  return allGather(std::string(), v, error);
}

bool Bootstrap::close(std::string &error) {
  if (closed_)
    return true;
  if (broken_ || nranks_ < 1) {
    closed_ = true;
    return true; // nothing to agree on after an error
  }
  // A last round K: when it completes here, every rank has read round K-1
  // (whose files are gone now); round K's files remain. Then each rank
  // creates DIR/left.r, having read all of round K. Whoever then counts R
  // "left" files knows that nobody reads round K any more and removes round
  // K and the "left" files (two ranks may both do it: unlink is idempotent).
  bool ok = barrier(error);
  closed_ = true;
  if (!ok)
    return false;
  const int64_t K = round_ - 1;
  std::string mine = dir_ + "/left." + std::to_string(rank_);
  int fd = ::open(mine.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    error = "bootstrap: creating " + mine + ": " + std::strerror(errno);
    return false;
  }
  ::close(fd);
  int left = 0;
  struct stat st;
  for (int r = 0; r < nranks_; ++r)
    left += ::stat((dir_ + "/left." + std::to_string(r)).c_str(), &st) == 0;
  if (left == nranks_) {
    for (int r = 0; r < nranks_; ++r)
      ::unlink(path(K, r).c_str());
    for (int r = 0; r < nranks_; ++r)
      ::unlink((dir_ + "/left." + std::to_string(r)).c_str());
    if (createdDir_)
      ::rmdir(dir_.c_str()); // fails harmlessly while another rank sweeps
  }
  return true;
}

bool Bootstrap::fromEnvironment(int &rank, int &nranks, std::string &dir,
                                int64_t &timeoutMs, std::string &error) {
  if (rank < 0 && !envInt("PURLIN_RANK", rank) &&
      !envInt("OMPI_COMM_WORLD_RANK", rank) && !envInt("SLURM_PROCID", rank)) {
    error = "no rank: pass one, or set PURLIN_RANK";
    return false;
  }
  if (nranks < 0 && !envInt("PURLIN_NRANKS", nranks) &&
      !envInt("OMPI_COMM_WORLD_SIZE", nranks) &&
      !envInt("SLURM_NTASKS", nranks)) {
    error = "no rank count: pass one, or set PURLIN_NRANKS";
    return false;
  }
  if (dir.empty()) {
    const char *d = std::getenv("PURLIN_BOOTSTRAP_DIR");
    if (!d || !*d) {
      error = "no bootstrap directory: pass one, or set PURLIN_BOOTSTRAP_DIR";
      return false;
    }
    dir = d;
  }
  timeoutMs = 60000;
  int t = 0;
  if (envInt("PURLIN_BOOTSTRAP_TIMEOUT_MS", t) && t > 0)
    timeoutMs = t;
  return true;
}

} // namespace rt
} // namespace purlin
