// Framed messages over a TCP socket, for the TCP bootstrap
// (TcpBootstrap.cpp): reads and writes with a deadline, frames of {magic,
// type, length} + bytes, and a close that lets the peer read the last frame.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace purlin {
namespace rt {
namespace net {

using Clock = std::chrono::steady_clock;
/// Milliseconds until the deadline (0 when past).
int64_t msLeft(Clock::time_point deadline);
/// "what: strerror(errno)".
std::string errnoText(const char *what);
/// Reads exactly n bytes before the deadline. 1: done, 0: the peer closed,
/// -1: timeout, -2: error.
int readFull(int fd, void *buf, size_t n, Clock::time_point deadline);
bool writeFull(int fd, const void *buf, size_t n);
/// A frame of `type` ('D' data, 'E' an error message) holding s.
bool sendFrame(int fd, uint32_t type, const std::string &s);
/// 1: a frame, 0: closed, -1: timeout, -2: error or a malformed frame.
int readFrame(int fd, uint32_t &type, std::string &s, Clock::time_point deadline);
/// Sends an error frame, then a FIN, and reads what the peer had sent, so
/// that the close does not reset the connection (a reset can drop the
/// frame before the peer reads it); fd becomes -1.
void tellAndClose(int &fd, const std::string &why);
/// A send timeout of ms and TCP_NODELAY.
void setTimeouts(int fd, int64_t ms);

} // namespace net
} // namespace rt
} // namespace purlin
