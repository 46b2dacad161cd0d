// The TCP bootstrap (Bootstrap.h): a star around rank 0.
//
// The id: magic, IPv4 address and port of the listening socket, a random
// nonce, the pid of its maker. Rank r > 0 connects (retrying while the
// connection is refused, up to the timeout) and sends a hello {magic,
// nonce, rank, nranks}; rank 0 takes the listener made by makeUniqueId in
// its own process and accepts until every rank said hello (a connection
// with another nonce is dropped: a stray or an old job's rank).
//
// An exchange: each rank > 0 sends a frame with its blob; rank 0 waits for
// all of them at once (poll), then sends each the concatenation. Frames are
// {magic, type, length} + bytes; type 'D' is data, 'E' an error message:
// rank 0, on a timeout or a rank gone, sends 'E' naming the ranks to every
// other rank and closes, so nobody waits longer than the timeout.
#include "Bootstrap.h"
#include "Frames.h"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

namespace purlin {
namespace rt {

bool Bootstrap::barrier(std::string &error) {
  std::vector<std::string> all;
  return allGather(std::string(), all, error);
}

int64_t bootstrapTimeoutMs() {
  const char *t = std::getenv("PURLIN_BOOTSTRAP_TIMEOUT_MS");
  long long v = t ? std::atoll(t) : 0;
  return v > 0 ? (int64_t)v : 60000;
}

namespace {
using namespace net;
constexpr uint32_t kIdMagic = 0x70726c69;    // "prli"

struct IdBytes {
  uint32_t magic;
  uint32_t addr; // network order
  uint16_t port; // network order
  uint16_t pad;
  uint32_t pid;
  uint64_t nonce;
};
static_assert(sizeof(IdBytes) <= kUniqueIdBytes, "id too large");

struct Hello {
  uint32_t magic;
  int32_t rank, nranks;
  uint32_t pad;
  uint64_t nonce;
};



/// The listeners of ids this process made, by nonce (rank 0 takes its own).
std::mutex gMutex;
std::map<uint64_t, int> &listeners() {
  static std::map<uint64_t, int> m;
  return m;
}



std::string rankList(const std::vector<int> &ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i)
    s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s;
}

class TcpBootstrap : public Bootstrap {
public:
  TcpBootstrap(int rank, int nranks, int64_t timeoutMs)
      : Bootstrap(rank, nranks), timeoutMs_(timeoutMs),
        peers_(rank == 0 ? nranks : 0, -1) {}
  ~TcpBootstrap() override { abort(); }

  bool rootAccept(int listenFd, uint64_t nonce, std::string &error);
  bool join(const IdBytes &id, std::string &error);
  bool allGather(const std::string &mine, std::vector<std::string> &out,
                 std::string &error) override;
  void abort() override {
    for (int &fd : peers_)
      if (fd >= 0) {
        ::close(fd);
        fd = -1;
      }
    if (root_ >= 0) {
      ::close(root_);
      root_ = -1;
    }
    broken_ = true;
  }

private:
  bool fail(const std::string &why, std::string &error) {
    error = why;
    if (rank_ == 0) // tell everyone still connected, then drop them
      for (int fd : peers_)
        if (fd >= 0)
          tellAndClose(fd, why);
    abort();
    return false;
  }
  int64_t timeoutMs_;
  std::vector<int> peers_; // rank 0: a socket per rank (peers_[0] unused)
  int root_ = -1;          // rank > 0: the socket to rank 0
  int64_t round_ = 0;
};

bool TcpBootstrap::rootAccept(int listenFd, uint64_t nonce,
                              std::string &error) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs_);
  int arrived = 1;
  while (arrived < nranks_) {
    pollfd pf{listenFd, POLLIN, 0};
    int pr = ::poll(&pf, 1, (int)std::min<int64_t>(msLeft(deadline), 1 << 30));
    if (pr < 0 && errno == EINTR)
      continue;
    if (pr <= 0) {
      std::vector<int> missing;
      for (int r = 1; r < nranks_; ++r)
        if (peers_[r] < 0)
          missing.push_back(r);
      ::close(listenFd);
      return fail(pr == 0 ? "bootstrap: " + rankList(missing) + " of " +
                                std::to_string(nranks_) +
                                " did not arrive within " +
                                std::to_string(timeoutMs_) + " ms"
                          : errnoText("bootstrap: poll"),
                  error);
    }
    int fd = ::accept(listenFd, nullptr, nullptr);
    if (fd < 0)
      continue;
    Hello h;
    // A hello is sent right after the connect: a short wait is enough, and
    // a silent stranger cannot hold the others up for long.
    auto helloBy = std::min(deadline, Clock::now() + std::chrono::seconds(5));
    if (readFull(fd, &h, sizeof h, helloBy) != 1 || h.magic != kIdMagic ||
        h.nonce != nonce) {
      ::close(fd); // not one of ours
      continue;
    }
    if (h.nranks != nranks_ || h.rank <= 0 || h.rank >= nranks_ ||
        peers_[h.rank] >= 0) {
      std::string why =
          h.nranks != nranks_
              ? "bootstrap: rank " + std::to_string(h.rank) +
                    " says the job has " + std::to_string(h.nranks) +
                    " ranks, rank 0 " + std::to_string(nranks_)
              : "bootstrap: rank " + std::to_string(h.rank) +
                    (h.rank > 0 && h.rank < nranks_ ? " arrived twice"
                                                    : " is out of range");
      tellAndClose(fd, why);
      ::close(listenFd);
      return fail(why, error);
    }
    setTimeouts(fd, timeoutMs_);
    peers_[h.rank] = fd;
    ++arrived;
  }
  ::close(listenFd);
  return true;
}

bool TcpBootstrap::join(const IdBytes &id, std::string &error) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs_);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = id.addr;
  sa.sin_port = id.port;
  char addr[INET_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET, &id.addr, addr, sizeof addr);
  std::string where = std::string(addr) + ":" + std::to_string(ntohs(id.port));
  for (;;) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
      return fail(errnoText("bootstrap: socket"), error);
    if (::connect(fd, (sockaddr *)&sa, sizeof sa) == 0) {
      root_ = fd;
      break;
    }
    int e = errno;
    ::close(fd);
    if ((e != ECONNREFUSED && e != EINTR && e != ETIMEDOUT) ||
        msLeft(deadline) == 0)
      return fail("bootstrap: rank " + std::to_string(rank_) +
                      " cannot reach rank 0 at " + where + ": " +
                      std::strerror(e),
                  error);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  setTimeouts(root_, timeoutMs_);
  Hello h{kIdMagic, rank_, nranks_, 0, id.nonce};
  if (!writeFull(root_, &h, sizeof h))
    return fail(errnoText(("bootstrap: hello to rank 0 at " + where).c_str()),
                error);
  return true;
}

bool TcpBootstrap::allGather(const std::string &mine,
                             std::vector<std::string> &out,
                             std::string &error) {
  if (broken_) {
    error = "bootstrap: unusable after an earlier error";
    return false;
  }
  const int R = nranks_;
  const std::string ex = " (exchange " + std::to_string(round_++) + ")";
  auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs_);
  out.assign(R, std::string());
  if (rank_ != 0) {
    // Rank 0 answers within its own timeout (the data, or an error naming
    // the ranks it lacks) unless it is gone (the connection closes) or
    // hung; it may enter the exchange later than this rank, hence twice.
    deadline += std::chrono::milliseconds(timeoutMs_);
    bool sent = sendFrame(root_, 'D', mine);
    uint32_t type = 0;
    std::string all;
    int r = readFrame(root_, type, all,
                      sent ? deadline
                           : Clock::now() + std::chrono::milliseconds(100));
    if (!sent && !(r == 1 && type == 'E'))
      return fail("bootstrap: rank 0 is gone (sending" + ex + ")", error);
    if (r == 1 && type == 'E')
      return fail(all, error);
    if (r != 1 || type != 'D')
      return fail(r == -1 ? "bootstrap: no answer from rank 0 within " +
                                std::to_string(2 * timeoutMs_) + " ms" + ex
                  : r == 0 ? "bootstrap: rank 0 closed its connection" + ex +
                                 " (process gone?)"
                           : "bootstrap: a malformed frame from rank 0" + ex,
                  error);
    size_t at = 0;
    for (int q = 0; q < R; ++q) {
      uint64_t n = 0;
      if (at + 8 > all.size())
        return fail("bootstrap: a short reply from rank 0" + ex, error);
      std::memcpy(&n, all.data() + at, 8);
      at += 8;
      if (at + n > all.size())
        return fail("bootstrap: a short reply from rank 0" + ex, error);
      out[q] = all.substr(at, n);
      at += n;
    }
    return true;
  }
  out[0] = mine;
  std::vector<int> pending;
  for (int q = 1; q < R; ++q)
    pending.push_back(q);
  while (!pending.empty()) {
    std::vector<pollfd> pf;
    for (int q : pending)
      pf.push_back({peers_[q], POLLIN, 0});
    int pr = ::poll(pf.data(), pf.size(),
                    (int)std::min<int64_t>(msLeft(deadline), 1 << 30));
    if (pr < 0 && errno == EINTR)
      continue;
    if (pr == 0)
      return fail("bootstrap: " + rankList(pending) +
                      " did not answer within " + std::to_string(timeoutMs_) +
                      " ms" + ex,
                  error);
    if (pr < 0)
      return fail(errnoText("bootstrap: poll"), error);
    std::vector<int> still;
    for (size_t i = 0; i < pending.size(); ++i) {
      int q = pending[i];
      if (!pf[i].revents) {
        still.push_back(q);
        continue;
      }
      uint32_t type = 0;
      int r = readFrame(peers_[q], type, out[q], deadline);
      if (r != 1 || type != 'D')
        return fail(r == 0
                        ? "bootstrap: rank " + std::to_string(q) +
                              " closed its connection" + ex + " (process gone?)"
                    : r == -1 ? "bootstrap: rank " + std::to_string(q) +
                                    " did not finish within " +
                                    std::to_string(timeoutMs_) + " ms" + ex
                              : "bootstrap: a malformed frame from rank " +
                                    std::to_string(q) + ex,
                    error);
    }
    pending.swap(still);
  }
  std::string all;
  for (int q = 0; q < R; ++q) {
    uint64_t n = out[q].size();
    all.append((const char *)&n, 8);
    all += out[q];
  }
  for (int q = 1; q < R; ++q)
    if (!sendFrame(peers_[q], 'D', all))
      return fail("bootstrap: rank " + std::to_string(q) +
                      " is gone (sending the result" + ex + ")",
                  error);
  return true;
}
} // namespace

bool makeUniqueId(char out[kUniqueIdBytes], std::string &error) {
  std::memset(out, 0, kUniqueIdBytes);
  IdBytes id{};
  id.magic = kIdMagic;
  id.pid = (uint32_t)getpid();
  if (getrandom(&id.nonce, sizeof id.nonce, 0) != (ssize_t)sizeof id.nonce) {
    error = errnoText("purlinGetUniqueId: getrandom");
    return false;
  }
  const char *a = std::getenv("PURLIN_BOOTSTRAP_ADDR");
  std::string addr = a && *a ? a : "127.0.0.1";
  in_addr ia{};
  if (inet_pton(AF_INET, addr.c_str(), &ia) != 1) {
    error = "purlinGetUniqueId: PURLIN_BOOTSTRAP_ADDR '" + addr +
            "' is not an IPv4 address";
    return false;
  }
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = errnoText("purlinGetUniqueId: socket");
    return false;
  }
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr = ia;
  sa.sin_port = 0;
  socklen_t len = sizeof sa;
  if (::bind(fd, (sockaddr *)&sa, sizeof sa) != 0 || ::listen(fd, 256) != 0 ||
      ::getsockname(fd, (sockaddr *)&sa, &len) != 0) {
    error = errnoText(("purlinGetUniqueId: listening on " + addr).c_str());
    ::close(fd);
    return false;
  }
  id.addr = ia.s_addr;
  id.port = sa.sin_port;
  {
    std::lock_guard<std::mutex> lock(gMutex);
    listeners()[id.nonce] = fd;
  }
  std::memcpy(out, &id, sizeof id);
  return true;
}

uint64_t uniqueIdNonce(const char idBytes[kUniqueIdBytes]) {
  IdBytes id;
  std::memcpy(&id, idBytes, sizeof id);
  return id.magic == kIdMagic ? id.nonce : 0;
}

std::unique_ptr<Bootstrap> connectTcp(const char idBytes[kUniqueIdBytes],
                                      int rank, int nranks, int64_t timeoutMs,
                                      std::string &error) {
  IdBytes id;
  std::memcpy(&id, idBytes, sizeof id);
  if (id.magic != kIdMagic) {
    error = "bootstrap: not a unique id (purlinGetUniqueId makes one)";
    return nullptr;
  }
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    error = "bootstrap: rank " + std::to_string(rank) + " of " +
            std::to_string(nranks);
    return nullptr;
  }
  if (timeoutMs <= 0) {
    error = "bootstrap: the timeout must be positive";
    return nullptr;
  }
  auto b = std::make_unique<TcpBootstrap>(rank, nranks, timeoutMs);
  if (rank == 0) {
    int fd = -1;
    {
      std::lock_guard<std::mutex> lock(gMutex);
      auto it = listeners().find(id.nonce);
      if (it != listeners().end()) {
        fd = it->second;
        listeners().erase(it);
      }
    }
    if (fd < 0) {
      error = "bootstrap: rank 0 must run in the process that made the id "
              "(pid " +
              std::to_string(id.pid) + "), and use it once; this is pid " +
              std::to_string((long)getpid());
      return nullptr;
    }
    if (!b->rootAccept(fd, id.nonce, error))
      return nullptr;
  } else if (!b->join(id, error)) {
    return nullptr;
  }
  return b;
}

} // namespace rt
} // namespace purlin
