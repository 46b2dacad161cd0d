// The disk cache of first-use cubins (DiskCache.h).
#include "DiskCache.h"
#include "purlin/spec/Hash.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <chrono>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace purlin {
namespace rt {
namespace sm {

namespace {
/// mkdir -p; false when `dir` is not a folder afterwards.
bool makeDirs(const std::string &dir) {
  for (size_t i = 1; i <= dir.size(); ++i)
    if (i == dir.size() || dir[i] == '/') {
      const std::string sub = dir.substr(0, i);
      if (mkdir(sub.c_str(), 0755) != 0 && errno != EEXIST)
        return false;
    }
  struct stat st;
  return stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
} // namespace

std::string contentHash(const std::string &text) {
  char b[40];
  std::snprintf(b, sizeof b, "%016llx%016llx",
                (unsigned long long)fnv1a(text, 0xcbf29ce484222325ull),
                (unsigned long long)fnv1a(text, 0x84222325cbf29ce4ull));
  return b;
}

std::string cacheDir() {
  if (const char *d = std::getenv("PURLIN_CACHE_DIR"))
    return std::strcmp(d, "none") == 0 ? "" : d;
  if (const char *x = std::getenv("XDG_CACHE_HOME"))
    if (*x)
      return std::string(x) + "/purlin";
  if (const char *h = std::getenv("HOME"))
    if (*h)
      return std::string(h) + "/.cache/purlin";
  return "";
}

bool cacheRead(const std::string &name, std::string &data) {
  const std::string dir = cacheDir();
  if (dir.empty())
    return false;
  std::ifstream f(dir + "/" + name, std::ios::binary);
  if (!f)
    return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  data = ss.str();
  return !data.empty();
}

bool cacheWrite(const std::string &name, const std::string &data) {
  const std::string dir = cacheDir();
  if (dir.empty() || !makeDirs(dir))
    return false;
  std::ostringstream tmp;
  tmp << dir << "/." << name << "." << getpid() << "."
      << std::hash<std::thread::id>()(std::this_thread::get_id());
  {
    std::ofstream f(tmp.str(), std::ios::binary);
    if (!f.write(data.data(), (std::streamsize)data.size()))
      return std::remove(tmp.str().c_str()), false;
  }
  if (std::rename(tmp.str().c_str(), (dir + "/" + name).c_str()) != 0)
    return std::remove(tmp.str().c_str()), false;
  return true;
}

CacheLock::CacheLock(const std::string &name, double waitSeconds) {
  const std::string dir = cacheDir();
  if (dir.empty() || !makeDirs(dir))
    return;
  const int fd = open((dir + "/." + name + ".lock").c_str(),
                      O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return;
  // Polled rather than blocking, so that a holder that hangs costs at most
  // the wait.
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::duration<double>(waitSeconds);
  for (;;) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      fd_ = fd;
      return;
    }
    if ((errno != EWOULDBLOCK && errno != EINTR) ||
        std::chrono::steady_clock::now() >= until) {
      close(fd);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

CacheLock::~CacheLock() {
  if (fd_ >= 0) {
    flock(fd_, LOCK_UN);
    close(fd_); // the lock file stays: removing it would race a new holder
  }
}

} // namespace sm
} // namespace rt
} // namespace purlin
