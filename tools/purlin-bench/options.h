// purlin-bench's command line (purlin_bench.cu's head comment lists the
// flags).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

namespace bench {

/// A size with an optional K, M or G suffix (powers of 1024).
inline int64_t parseSize(const char *s) {
  char *end;
  double v = std::strtod(s, &end);
  switch (*end) {
  case 'K':
  case 'k':
    v *= 1024;
    break;
  case 'M':
  case 'm':
    v *= 1024 * 1024;
    break;
  case 'G':
  case 'g':
    v *= 1024.0 * 1024 * 1024;
    break;
  }
  return (int64_t)v;
}

struct Options {
  std::string name = "all_reduce", dt = "f32", opName = "sum";
  int64_t minB = 8, maxB = 64 << 20, graphBelow = 4 << 20;
  double factor = 2;
  int iters = 20, warm = 5, check = 1, R = 8;
  bool nccl = false, gGiven = false, hostTime = false;
  std::map<std::string, int64_t> params; // -P NAME=V: group sizes, roots
};

/// -1 when the options are good, else the exit status.
inline int parseOptions(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string f = argv[i];
    if (f == "--nccl") {
      o.nccl = true;
      continue;
    }
    if (f == "--host-time") {
      o.hostTime = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "flag %s needs a value\n", f.c_str());
      return 2;
    }
    const char *v = argv[++i];
    if (f == "-b")
      o.minB = parseSize(v);
    else if (f == "-e")
      o.maxB = parseSize(v);
    else if (f == "-f")
      o.factor = std::atof(v);
    else if (f == "-n")
      o.iters = std::atoi(v);
    else if (f == "-w")
      o.warm = std::atoi(v);
    else if (f == "-c")
      o.check = std::atoi(v);
    else if (f == "-g") {
      o.R = std::atoi(v);
      o.gGiven = true;
    } else if (f == "-d")
      o.dt = v;
    else if (f == "-o")
      o.opName = v;
    else if (f == "-C")
      o.name = v;
    else if (f == "-G")
      o.graphBelow = parseSize(v);
    else if (f == "-P") {
      const char *eq = std::strchr(v, '=');
      if (!eq || eq == v || !eq[1]) {
        std::fprintf(stderr, "-P takes NAME=VALUE (a group size or root)\n");
        return 2;
      }
      o.params[std::string(v, eq - v)] = std::atoll(eq + 1);
    }
    else {
      std::fprintf(stderr, "unknown flag %s\n", f.c_str());
      return 2;
    }
  }
  return -1;
}

} // namespace bench
