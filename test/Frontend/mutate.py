#!/usr/bin/env python3
"""Random mutation test of purlinc: every example, mutated with seeded random
edits (delete, duplicate or swap tokens, truncate, insert garbage), must make
purlinc exit with 0 or 1 -- never a signal, a crash or a timeout -- and when it
fails, print a `FILE:LINE:COL: error:` line.

usage: mutate.py PURLINC EXAMPLES_DIR WORK_DIR [--cases N] [--seed S]
"""
import argparse
import glob
import os
import random
import re
import subprocess
import sys
import time

TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|->|<=|//[^\n]*|\s+|.", re.S)
GARBAGE = list("()[]{},:;@*+-/%<=>!#$&|~?.'\"\\`^") + [
    "\x00", "\x01", "\xff", "\t", "\n", "99999999999999999999", "-", "((((",
    "]]]]", "name", "in", "out", "copy", "reduce(", "table[", "R", "0", "*",
    "x@*", "->", "<=", "//", "\u00e9", "collective"]


def mutate(text, rng):
    toks = [t for t in TOKEN.findall(text)]
    words = [i for i, t in enumerate(toks) if not t.isspace()]
    kind = rng.choice(["delete", "duplicate", "swap", "truncate", "garbage",
                       "replace", "multi"])
    if kind == "multi":
        for _ in range(rng.randint(2, 5)):
            text = mutate(text, rng)
        return text
    if kind == "truncate":
        return text[:rng.randint(0, len(text))]
    if kind == "garbage":
        pos = rng.randint(0, len(text))
        g = "".join(rng.choice(GARBAGE) for _ in range(rng.randint(1, 4)))
        return text[:pos] + g + text[pos:]
    if not words:
        return text
    i = rng.choice(words)
    if kind == "delete":
        toks[i] = ""
    elif kind == "duplicate":
        toks[i] = toks[i] + " " + toks[i]
    elif kind == "swap":
        j = rng.choice(words)
        toks[i], toks[j] = toks[j], toks[i]
    elif kind == "replace":
        toks[i] = toks[rng.choice(words)]
    return "".join(toks)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("purlinc")
    ap.add_argument("examples")
    ap.add_argument("work")
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=20240611)
    ap.add_argument("--timeout", type=float, default=10.0)
    args = ap.parse_args()

    sources = sorted(glob.glob(os.path.join(args.examples, "*.purlin")))
    if not sources:
        print("no examples in " + args.examples)
        return 1
    os.makedirs(args.work, exist_ok=True)
    rng = random.Random(args.seed)
    failures, outcomes = [], {0: 0, 1: 0}
    start = time.time()
    for n in range(args.cases):
        src = sources[n % len(sources)]
        with open(src, encoding="utf-8") as f:
            text = mutate(f.read(), rng)
        path = os.path.join(args.work, "m%03d.purlin" % n)
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text)
        cmd = [args.purlinc, path]
        if n % 3 == 1:
            cmd.append("--emit=desc")
        try:
            r = subprocess.run(cmd, capture_output=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            failures.append("%s: timeout (from %s)" % (path, src))
            continue
        err = r.stderr.decode("utf-8", "replace")
        if r.returncode not in (0, 1):
            failures.append("%s: exit %d (from %s)\n%s" %
                            (path, r.returncode, src, err[-2000:]))
            continue
        outcomes[r.returncode] += 1
        if r.returncode == 1 and not re.search(r":\d+:\d+: error: ", err):
            failures.append("%s: no FILE:LINE:COL error (from %s)\n%s" %
                            (path, src, err[-2000:]))
    took = time.time() - start
    print("mutation test: %d cases, %d accepted, %d rejected, %d failures, "
          "%.1f s" % (args.cases, outcomes[0], outcomes[1], len(failures), took))
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
