// Framed messages over a TCP socket: see Frames.h.
#include "Frames.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace purlin {
namespace rt {
namespace net {

namespace {
constexpr uint32_t kFrameMagic = 0x70726c66; // "prlf"

struct FrameHeader {
  uint32_t magic;
  uint32_t type; // 'D' data, 'E' error
  uint64_t bytes;
};
} // namespace

int64_t msLeft(Clock::time_point deadline) {
  auto d = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                 Clock::now());
  return d.count() > 0 ? (int64_t)d.count() : 0;
}

std::string errnoText(const char *what) {
  return std::string(what) + ": " + std::strerror(errno);
}

/// Reads exactly n bytes before the deadline. 1: done, 0: the peer closed,
/// -1: timeout, -2: error.
int readFull(int fd, void *buf, size_t n, Clock::time_point deadline) {
  char *p = (char *)buf;
  while (n > 0) {
    pollfd pf{fd, POLLIN, 0};
    int pr = ::poll(&pf, 1, (int)std::min<int64_t>(msLeft(deadline), 1 << 30));
    if (pr < 0 && errno == EINTR)
      continue;
    if (pr < 0)
      return -2;
    if (pr == 0)
      return -1;
    ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (r < 0)
      return errno == ECONNRESET ? 0 : -2;
    if (r == 0)
      return 0;
    p += r;
    n -= (size_t)r;
  }
  return 1;
}

bool writeFull(int fd, const void *buf, size_t n) {
  const char *p = (const char *)buf;
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

bool sendFrame(int fd, uint32_t type, const std::string &s) {
  FrameHeader h{kFrameMagic, type, (uint64_t)s.size()};
  return writeFull(fd, &h, sizeof h) && writeFull(fd, s.data(), s.size());
}

/// 1: a frame, 0: closed, -1: timeout, -2: error or a malformed frame.
int readFrame(int fd, uint32_t &type, std::string &s,
              Clock::time_point deadline) {
  FrameHeader h;
  int r = readFull(fd, &h, sizeof h, deadline);
  if (r != 1)
    return r;
  if (h.magic != kFrameMagic || h.bytes > (1ull << 34))
    return -2;
  type = h.type;
  s.resize(h.bytes);
  return h.bytes ? readFull(fd, &s[0], h.bytes, deadline) : 1;
}

/// Sends an error frame, then a FIN, and reads what the peer had sent, so
/// that the close does not reset the connection (a reset can drop the
/// frame before the peer reads it).
void tellAndClose(int &fd, const std::string &why) {
  sendFrame(fd, 'E', why);
  ::shutdown(fd, SHUT_WR);
  char buf[4096];
  while (::recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0) {
  }
  ::close(fd);
  fd = -1;
}

void setTimeouts(int fd, int64_t ms) {
  timeval tv{(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

} // namespace net
} // namespace rt
} // namespace purlin
