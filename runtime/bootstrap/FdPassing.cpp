#include "FdPassing.h"

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace purlin {
namespace rt {

namespace {
constexpr uint32_t kMagic = 0x70726664; // "prfd"
struct Message {
  uint32_t magic;
  int32_t rank;
  uint64_t tag;
};

socklen_t abstractAddress(const std::string &name, sockaddr_un &sa) {
  std::memset(&sa, 0, sizeof sa);
  sa.sun_family = AF_UNIX;
  size_t n = std::min(name.size(), sizeof sa.sun_path - 1);
  std::memcpy(sa.sun_path + 1, name.data(), n); // sun_path[0] = 0: abstract
  return (socklen_t)(offsetof(sockaddr_un, sun_path) + 1 + n);
}

std::string errnoText(const std::string &what) {
  return what + ": " + std::strerror(errno);
}
} // namespace

FdChannel::~FdChannel() { close(); }

void FdChannel::close() {
  if (listen_ >= 0)
    ::close(listen_);
  listen_ = -1;
  for (auto &kv : early_)
    ::close(kv.second);
  early_.clear();
}

bool FdChannel::open(int rank, uint64_t salt, std::string &error) {
  close();
  rank_ = rank;
  name_ = "purlin-fd-" + std::to_string((long)getpid()) + "-" +
          std::to_string((unsigned long long)salt) + "-" + std::to_string(rank);
  listen_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_ < 0) {
    error = errnoText("fd channel: socket");
    return false;
  }
  sockaddr_un sa;
  socklen_t len = abstractAddress(name_, sa);
  if (::bind(listen_, (sockaddr *)&sa, len) != 0 || ::listen(listen_, 256)) {
    error = errnoText("fd channel: listening on @" + name_);
    close();
    return false;
  }
  return true;
}

bool FdChannel::send(const std::string &peer, uint64_t tag, int fd,
                     std::string &error) {
  int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) {
    error = errnoText("fd channel: socket");
    return false;
  }
  sockaddr_un sa;
  socklen_t len = abstractAddress(peer, sa);
  if (::connect(s, (sockaddr *)&sa, len) != 0) {
    error = errnoText("fd channel: connecting to @" + peer);
    ::close(s);
    return false;
  }
  Message m{kMagic, rank_, tag};
  iovec iov{&m, sizeof m};
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))];
  std::memset(ctl, 0, sizeof ctl);
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctl;
  mh.msg_controllen = sizeof ctl;
  cmsghdr *cm = CMSG_FIRSTHDR(&mh);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(cm), &fd, sizeof fd);
  ssize_t w;
  do
    w = ::sendmsg(s, &mh, MSG_NOSIGNAL);
  while (w < 0 && errno == EINTR);
  bool ok = w == (ssize_t)sizeof m;
  if (!ok)
    error = errnoText("fd channel: sending to @" + peer);
  ::close(s); // the message (and the fd in flight) stays queued
  return ok;
}

bool FdChannel::receive(int from, uint64_t tag, int64_t timeoutMs, int &fd,
                        std::string &error) {
  fd = -1;
  auto key = std::make_pair(from, tag);
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  for (;;) {
    auto it = early_.find(key);
    if (it != early_.end()) {
      fd = it->second;
      early_.erase(it);
      return true;
    }
    if (listen_ < 0) {
      error = "fd channel: not open";
      return false;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    pollfd pf{listen_, POLLIN, 0};
    int pr = left > 0 ? ::poll(&pf, 1, (int)left) : 0;
    if (pr < 0 && errno == EINTR)
      continue;
    if (pr <= 0) {
      error = "fd channel: no file descriptor from rank " +
              std::to_string(from) + " within " + std::to_string(timeoutMs) +
              " ms (tag " + std::to_string((unsigned long long)tag) + ")";
      return false;
    }
    int s = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
    if (s < 0)
      continue;
    // The sender wrote its one message before closing: it is there.
    pollfd ps{s, POLLIN, 0};
    ::poll(&ps, 1, 1000);
    Message m{};
    iovec iov{&m, sizeof m};
    alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))];
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctl;
    mh.msg_controllen = sizeof ctl;
    ssize_t r = ::recvmsg(s, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    ::close(s);
    int got = -1;
    cmsghdr *cm = r == (ssize_t)sizeof m ? CMSG_FIRSTHDR(&mh) : nullptr;
    if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
      std::memcpy(&got, CMSG_DATA(cm), sizeof got);
    if (got < 0 || m.magic != kMagic) {
      if (got >= 0)
        ::close(got);
      continue; // a stray connection: ignored
    }
    auto k = std::make_pair((int)m.rank, m.tag);
    if (early_.count(k))
      ::close(early_[k]);
    early_[k] = got;
  }
}

bool FdChannel::exchange(const std::vector<std::string> &peers, uint64_t tag,
                         int fd, int64_t timeoutMs, std::vector<int> &out,
                         std::string &error) {
  const int R = (int)peers.size();
  out.assign(R, -1);
  for (int r = 0; r < R; ++r)
    if (r != rank_ && !send(peers[r], tag, fd, error))
      return false;
  for (int r = 0; r < R; ++r)
    if (r != rank_ && !receive(r, tag, timeoutMs, out[r], error)) {
      for (int &f : out)
        if (f >= 0) {
          ::close(f);
          f = -1;
        }
      return false;
    }
  return true;
}

} // namespace rt
} // namespace purlin
