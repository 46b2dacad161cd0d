// A tiny check library for purlin's unit tests (no GoogleTest: the GPU
// machine lacks it). Each test executable calls CHECK/CHECK_EQ in plain
// functions and ends with `return purlin_test::finish();`, which prints
//   N passed, N failed
// as its last line and returns non-zero when any check failed.
#pragma once

#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>

namespace purlin_test {

inline int &passed() {
  static int n = 0;
  return n;
}
inline int &failed() {
  static int n = 0;
  return n;
}
// Up to this many failures are printed; the rest only count.
inline int &printed() {
  static int n = 0;
  return n;
}
inline std::string &context() {
  static std::string s;
  return s;
}

inline bool report(bool ok, const char *file, int line, const std::string &what) {
  if (ok) {
    ++passed();
    return true;
  }
  ++failed();
  if (printed()++ < 200)
    std::printf("%s:%d: FAIL: %s%s%s\n", file, line, what.c_str(),
                context().empty() ? "" : "  [", context().empty() ? "" : (context() + "]").c_str());
  return false;
}

template <class T> std::string show(const T &v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
inline std::string show(uint8_t v) { return std::to_string((unsigned)v); }
inline std::string show(int8_t v) { return std::to_string((int)v); }
inline std::string show(const std::string &v) { return "\"" + v + "\""; }
inline std::string show(const char *v) { return show(std::string(v)); }
inline std::string show(bool v) { return v ? "true" : "false"; }

template <class A, class B>
bool checkEq(const A &a, const B &b, const char *as, const char *bs,
             const char *file, int line) {
  bool ok = a == b;
  return report(ok, file, line,
                ok ? std::string()
                   : std::string(as) + " == " + bs + " (" + show(a) + " vs " +
                         show(b) + ")");
}

inline int finish() {
  std::printf("%d passed, %d failed\n", passed(), failed());
  return failed() ? 1 : 0;
}

/// Sets a context string printed with every failure while it lives.
struct Context {
  std::string saved;
  explicit Context(const std::string &s) : saved(context()) {
    context() = saved.empty() ? s : saved + "; " + s;
  }
  ~Context() { context() = saved; }
};

/// all_to_all_v's description (examples/all_to_all_v.purlin as purlinc
/// --emit=desc writes it): the unit tests' collective with a table.
inline const char *const kAllToAllVDesc = R"(purlin-desc 1
collective all_to_all_v
param R ranks
param M count
param T type
param cnt table [R] [R] max [M]
buffer in x T [R*M]
buffer out y T [R*M]
clause copy
  dim s [R]
  dim d [R]
  dim i [cnt[s][d]]
  from x @ [s] [d*M + i]
  to y @ [d] [s*M + i]
end
)";

} // namespace purlin_test

#define CHECK(cond)                                                            \
  ::purlin_test::report(static_cast<bool>(cond), __FILE__, __LINE__, #cond)
#define CHECK_MSG(cond, msg)                                                   \
  ::purlin_test::report(static_cast<bool>(cond), __FILE__, __LINE__,           \
                        std::string(#cond) + ": " + (msg))
#define CHECK_EQ(a, b)                                                         \
  ::purlin_test::checkEq((a), (b), #a, #b, __FILE__, __LINE__)
