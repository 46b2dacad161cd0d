#!/usr/bin/env python3
"""Random valid collectives, end to end on the host target.

Generates N random .purlin collectives with a fixed seed (1 to 3 free dims,
rank roles '*', a coordinate over [R] or `root`, random affine index maps:
mixed-radix layouts of the dims in a random order, with padding, gaps,
offsets and interleaving strides, injective on the destination side; copy or
reduce), compiles each with `purlinc --target=host` into one folder (a
collective purlinc rejects is regenerated, and counted: most being rejected
fails the test), builds one runner and runs it over the grid given by
--grid (runner flags, one run per --grid). Prints the runner's lines and a
summary; exits non-zero on any failure.

  random_collectives.py --purlinc P --cxx CXX --src SRC --build BUILD --out DIR
      [--count 12] [--seed 1] [--grid "--ranks 1,2 --counts 0,1"]...
      [--shared N] [--sets N] [--variants direct,staged,...]

--shared adds N collectives of several clauses over one input and one
output; --sets adds N collectives of rank maps (shifts, reflections,
pairwise exchanges), sets over a group size G that divides R (sub-group
all-reduce, reduce, all-gather, reduce-scatter, all-reduce across groups,
every other rank) and permutations given as tables (bound at compile time
with R); --variants compiles each shared and sets collective once per
strategy, renamed, with lanes and chunks rotating over 1..8 and 1..5.
"""
import argparse
import os
import random
import shlex
import subprocess
import sys

# Extents of free dims: at most one scales with C (so that the names of one
# collective stay ~R*R*C at worst); the others are small constants.
C_EXTENTS = ["C", "C + 1", "2*C", "C + 3"]
SMALL_EXTENTS = ["1", "2", "3"]
OPS = ["op", "op", "op", "sum", "max"]  # mostly the redop parameter


def paren(e):
    return e if all(ch.isalnum() or ch == "_" for ch in e) else "(" + e + ")"


def layout(rng, dims, ext):
    """A random injective mixed-radix layout of `dims` (a list of names,
    with their extents in `ext`): returns (index expression, size
    expression). Dims are laid out in a random order; each gets padding;
    the innermost may be strided (interleaved); a random offset leads and a
    random tail follows."""
    order = dims[:]
    rng.shuffle(order)
    inner = rng.choice(["1", "1", "2", "3"])  # stride of the innermost dim
    stride = inner
    terms = []
    for d in reversed(order):  # innermost last in `order`
        terms.append(d if stride == "1" else "%s*%s" % (d, paren(stride)))
        pad = rng.choice([0, 0, 0, 1, 2])
        span = ext[d] if pad == 0 else "%s + %d" % (ext[d], pad)
        stride = span if stride == "1" else "%s*%s" % (paren(span), paren(stride))
    off = rng.choice([0, 0, 0, 1, 5])
    tail = rng.choice([0, 0, 1, 4])
    terms.reverse()
    if rng.random() < 0.5:
        rng.shuffle(terms)  # the sum's order is free
    index = " + ".join(terms) if terms else "0"
    if off:
        index = "%d + %s" % (off, index) if rng.random() < 0.5 else "%s + %d" % (index, off)
    size = stride  # the outermost span times its stride
    if off + tail:
        size = "%s + %d" % (size, off + tail)
    return index, size


def clause(rng, k, src=None, dst=None, dst_off=None):
    """One clause reading x<k> and writing y<k> (or reading buffer `src` and
    writing buffer `dst` from offset `dst_off` on): returns (buffers, name
    line, needs root, needs op), the buffers as declarations of x<k> and
    y<k> with their sizes."""
    # Rank roles. A copy needs one contributor: from is a coordinate or root.
    op = rng.choice(["copy", "reduce"])
    if op == "copy":
        frm = rng.choice(["coord", "coord", "root"])
    else:
        frm = rng.choice(["*", "*", "*", "coord"])
    to = rng.choice(["*", "coord", "coord", "root"])
    nfree = rng.randint(1, 3)
    free = ["i", "j", "k"][:nfree]
    ext = {}
    scaled = rng.randrange(nfree + 1)  # which free dim scales with C (or none)
    for n, d in enumerate(free):
        ext[d] = rng.choice(C_EXTENTS) if n == scaled else rng.choice(SMALL_EXTENTS)
    dims = list(free)
    frank = trank = None
    if frm == "coord":
        frank = "r"
        ext["r"] = "R"
        dims.append("r")
    if to == "coord":
        if frm == "coord" and rng.random() < 0.3:
            trank = "r"  # the same rank reads and writes
        else:
            trank = "d"
            ext["d"] = "R"
            dims.append("d")
    rng.shuffle(dims)  # declaration order is free: extents use no coordinate
    # Destination: injective over every dim but the destination rank's.
    dst_dims = [d for d in dims if d != trank]
    # Sources need no injectivity: a subset of the dims (the contributor
    # rank's dim only sometimes), never empty when something varies.
    src_dims = [d for d in dims if d != frank or rng.random() < 0.4]
    if len(src_dims) > 1 and rng.random() < 0.25:
        src_dims.remove(rng.choice(src_dims))  # several names read one place
    dst_index, dst_size = layout(rng, dst_dims, ext)
    src_index, src_size = layout(rng, src_dims, ext)
    sel = {"*": "*", "coord": None, "root": "root"}
    fsel = frank if frm == "coord" else sel[frm]
    tsel = trank if to == "coord" else sel[to]
    if op == "copy":
        opt, needs_op = "copy", False
    else:
        o = rng.choice(OPS)
        opt, needs_op = "reduce(%s)" % o, o == "op"
    coords = ", ".join(dims)
    if len(dims) > 1:
        coords = "(" + coords + ")"
    exts = ", ".join(ext[d] for d in dims)
    if dst_off:
        dst_index = "%s + %s" % (dst_off, dst_index)
    line = "  name %s in [%s]: %s@%s[%s] -> %s@%s[%s] %s;" % (
        coords, exts, src or "x%d" % k, fsel, src_index, dst or "y%d" % k, tsel,
        dst_index, opt)
    bufs = ["  in  x%d: T[%s];" % (k, src_size), "  out y%d: T[%s];" % (k, dst_size)]
    return bufs, line, "root" in (frm, to), needs_op, src_size, dst_size


def collective(rng, name, shared=False):
    """A random collective; `shared`: 2 or 3 clauses that all read one input
    x (each through its own layout, inside x's size) and write disjoint
    parts of one output y (clause k from the sum of the earlier clauses'
    sizes on), so that in place one clause's writes can overwrite what
    another reads."""
    bufs, lines, root, op = [], [], False, False
    if shared:
        srcs, off = [], []
        for k in range(rng.choice([2, 2, 3])):
            at = " + ".join(paren(d) for d in off) or None
            b, l, r, o, ssize, dsize = clause(rng, k, "x", "y", at)
            lines.append(l)
            srcs.append(ssize)
            off.append(dsize)
            root |= r
            op |= o
        # x holds every clause's source layout: the largest is below the sum.
        bufs = ["  in  x: T[%s];" % " + ".join(paren(e) for e in srcs),
                "  out y: T[%s];" % " + ".join(paren(e) for e in off)]
    else:
        for k in range(1 if rng.random() < 0.75 else 2):
            b, l, r, o, _, _ = clause(rng, k)
            bufs += b
            lines.append(l)
            root |= r
            op |= o
    params = ["R: ranks", "C: count", "T: type"]
    if op:
        params.append("op: redop")
    if root:
        params.append("root: root")
    src = "// generated by random_collectives.py\n"
    src += "collective %s(%s) {\n" % (name, ", ".join(params))
    src += "\n".join(bufs + lines) + "\n}\n"
    return src


def free_dims(rng, names="imn"):
    """1 or 2 free dims (not rank coordinates): names and extents, at most
    one scaling with C."""
    n = rng.randint(1, 2)
    dims = list(names[:n])
    scaled = rng.randrange(n + 1)
    return dims, {d: (rng.choice(C_EXTENTS) if k == scaled else rng.choice(SMALL_EXTENTS))
                  for k, d in enumerate(dims)}


def sets_collective(rng, name):
    """A random collective of the issue-13 forms: a rank map of the
    coordinates (a shift, a reflection, a pairwise exchange, pairs gathered
    to one rank), a set of ranks over a group size G that divides R (a
    sub-group's all-reduce, reduce, all-gather, reduce-scatter, an
    all-reduce across groups, every other rank), or a permutation given as
    a table (R and the table bound at compile time). Index maps are random
    injective layouts as in `clause`. Returns (source, purlinc flags)."""
    F, ext = free_dims(rng)
    kind = rng.choice(["shift", "reflect", "exchange", "halve", "group_ar", "group_leader",
                       "group_ag", "group_rs", "across", "evens", "table"])
    params = ["R: ranks", "C: count", "T: type"]
    flags = []
    op = "copy"
    if kind not in ("shift", "reflect", "exchange", "halve", "group_ag", "table"):
        o = rng.choice(OPS)
        op = "reduce(%s)" % o
        if o == "op":
            params.append("op: redop")
    grp = "{g*G + k | k in [G]}"
    # (coordinates, extents, from rank, to rank, dims the destination
    # index spans for one destination rank, dims the source index may use)
    if kind in ("shift", "reflect", "table"):
        b = rng.randrange(4)
        to = {"shift": "((r + %d) %% R)" % b, "reflect": "(R - 1 - r)",
              "table": "(perm[r])"}[kind]
        frm = "r"
        if kind == "table" and rng.random() < 0.5:
            frm, to = "(perm[r])", "r"  # the inverse permutation
        rank_dims, rank_ext = ["r"], {"r": "R"}
        dst_span, src_use = [], ["r"]
        if kind == "table":
            R = rng.randint(1, 8)
            perm = list(range(R))
            rng.shuffle(perm)
            params.append("perm: table[R] <= R - 1")
            flags = ["-D", "R=%d" % R, "-D", "perm=" + ":".join(map(str, perm))]
    elif kind == "exchange":  # ranks 2p and 2p + 1 swap; an odd R's last rank idles
        rank_dims, rank_ext = ["p", "h"], {"p": "R/2", "h": "2"}
        frm, to = "(2*p + h)", "(2*p + 1 - h)"
        dst_span, src_use = [], ["p", "h"]
    elif kind == "halve":  # ranks 2q and 2q + 1 both to rank q, side by side
        rank_dims, rank_ext = ["q", "h"], {"q": "R/2", "h": "2"}
        frm, to = "(2*q + h)", "q"
        dst_span, src_use = ["h"], ["q", "h"]
    elif kind in ("group_ar", "group_leader"):
        params.insert(1, "G: group")
        rank_dims, rank_ext = ["g"], {"g": "R/G"}
        frm = grp
        to = grp if kind == "group_ar" else rng.choice(["(g*G)", "(g*G + G - 1)"])
        dst_span, src_use = [], []
    elif kind in ("group_ag", "group_rs"):
        params.insert(1, "G: group")
        rank_dims, rank_ext = ["g", "j"], {"g": "R/G", "j": "G"}
        if kind == "group_ag":
            frm, to, dst_span, src_use = "(g*G + j)", grp, ["j"], []
        else:
            frm, to, dst_span, src_use = grp, "(g*G + j)", [], ["j"]
    elif kind == "across":
        params.insert(1, "G: group")
        rank_dims, rank_ext = ["j"], {"j": "G"}
        frm = "{h*G + j | h in [R/G]}"
        to = frm if rng.random() < 0.7 else "j"
        dst_span, src_use = [], ["j"]
    else:  # evens: an all-reduce of every other rank; the odd ranks idle
        rank_dims, rank_ext = [], {}
        frm = to = "{2*e | e in [(R + 1)/2]}"
        dst_span, src_use = [], []
    ext.update(rank_ext)
    dims = rank_dims + F
    dst_index, dst_size = layout(rng, F + dst_span, ext)
    src_dims = F + [d for d in src_use if rng.random() < 0.6]
    src_index, src_size = layout(rng, src_dims, ext)
    coords = ", ".join(dims)
    if len(dims) > 1:
        coords = "(" + coords + ")"
    src = "// generated by random_collectives.py (rank maps and sets)\n"
    src += "collective %s(%s) {\n" % (name, ", ".join(params))
    src += "  in  x: T[%s];\n  out y: T[%s];\n" % (src_size, dst_size)
    src += "  name %s in [%s]: x@%s[%s] -> y@%s[%s] %s;\n}\n" % (
        coords, ", ".join(ext[d] for d in dims), frm, src_index, to, dst_index, op)
    return src, flags


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--purlinc", required=True)
    ap.add_argument("--cxx", default="c++")
    ap.add_argument("--src", required=True, help="purlin source tree")
    ap.add_argument("--build", required=True, help="purlin build tree")
    ap.add_argument("--out", required=True)
    ap.add_argument("--count", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--grid", action="append", default=[])
    ap.add_argument("--generate-only", action="store_true")
    ap.add_argument("--shared", type=int, default=0,
                    help="also N collectives of 2-3 clauses over one input and one output")
    ap.add_argument("--sets", type=int, default=0,
                    help="also N collectives of rank maps, sets over a group size, "
                         "and permutations given as tables")
    ap.add_argument("--variants", default="",
                    help="comma-separated strategies: each shared collective is compiled "
                         "once per strategy (renamed <name>_<strategy>_l<lanes>_c<chunks>), "
                         "lanes and chunks rotating over 1..8 and 1..5")
    a = ap.parse_args()

    gen = os.path.join(a.out, "gen")
    srcdir = os.path.join(a.out, "src")
    os.makedirs(gen, exist_ok=True)
    os.makedirs(srcdir, exist_ok=True)
    variants = [v for v in a.variants.split(",") if v]
    # The plain collectives, then the shared ones (their own generator, so
    # that adding them leaves the others as they were).
    total_acc = total_rej = 0
    for kind, count, rng in (("rand", a.count, random.Random(a.seed)),
                             ("shared", a.shared, random.Random(a.seed + 1000)),
                             ("sets", a.sets, random.Random(a.seed + 2000))):
        accepted = rejected = 0
        attempts = 0
        while accepted < count:
            attempts += 1
            if attempts > 4 * count:
                break
            name = "%s%d" % (kind, accepted)
            bound = []
            if kind == "sets":
                text, bound = sets_collective(rng, name)
            else:
                text = collective(rng, name, shared=kind == "shared")
            builds = [(name, text, bound)]
            if kind != "rand" and variants:
                builds = []
                for j, st in enumerate(variants):
                    lanes, chunks = 1 + (accepted * 3 + j) % 8, 1 + (accepted + j) % 5
                    vname = "%s_%s_l%d_c%d" % (name, st, lanes, chunks)
                    builds.append((vname, text.replace("collective %s(" % name,
                                                       "collective %s(" % vname),
                                   bound + ["--strategy=" + st, "--lanes=%d" % lanes,
                                            "--chunks=%d" % chunks]))
            ok = True
            for bname, btext, flags in builds:
                path = os.path.join(srcdir, bname + ".purlin")
                with open(path, "w") as f:
                    f.write(btext)
                p = subprocess.run([a.purlinc, path, "--target=host", "-o", gen] + flags,
                                   capture_output=True, text=True)
                if p.returncode == 0:
                    continue
                msg = (p.stderr or p.stdout).strip().splitlines()
                print("rejected (%d): %s" % (p.returncode, msg[0] if msg else "?"))
                if p.returncode != 1 or any(f.startswith("--strategy") for f in flags):
                    # a crash, or a strategy refused
                    print(btext + p.stderr)
                    print("random collectives: FAIL: purlinc %s" %
                          ("crashed" if p.returncode != 1 else "refused " + " ".join(flags)))
                    return 1
                ok = False
                break
            if not ok:
                rejected += 1
                with open(os.path.join(srcdir, "rejected_%s%d.purlin" % (kind, rejected)),
                          "w") as f:
                    f.write(text)
                continue
            print(text.rstrip())
            accepted += 1
        if accepted < count or rejected > accepted:
            print("random collectives: FAIL: purlinc rejected most generated collectives")
            return 1
        total_acc += accepted
        total_rej += rejected
    print("generated: %d accepted, %d rejected" % (total_acc, total_rej))
    if a.generate_only:
        return 0

    runner = os.path.join(a.out, "runner")
    # The runner: tools/host-runner.sh (unity builds, one per core).
    p = subprocess.run(["bash", os.path.join(a.src, "tools/host-runner.sh"), a.build, gen,
                        runner], capture_output=True, text=True,
                       env=dict(os.environ, CXX=a.cxx))
    if p.returncode != 0:
        print(p.stdout + p.stderr)
        print("random collectives: FAIL: the runner does not build")
        return 1

    # The grids run at once: the host target's randomized scheduling (jitter)
    # mostly waits, so they overlap well even on two cores.
    procs = [(g, subprocess.Popen([runner] + shlex.split(g), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True))
             for g in (a.grid or [""])]
    total_pass = total_fail = 0
    for g, proc in procs:
        stdout, stderr = proc.communicate()
        out = stdout.strip().splitlines()
        for l in out[:-1]:
            print(l)  # failures (and --table lines)
        last = out[-1] if out else ""
        print("grid %s: %s" % (g, last))
        try:
            np_, nf = last.split(" passed, ")
            npass, nfail = int(np_), int(nf.split()[0])
        except ValueError:
            npass, nfail = 0, 1
            print(stderr)
        if proc.returncode != 0 and nfail == 0:
            nfail = 1
            print("runner exit status %d: %s" % (proc.returncode, stderr))
        total_pass += npass
        total_fail += nfail
    print("random collectives: %d collectives, %d passed, %d failed"
          % (total_acc, total_pass, total_fail))
    return 1 if total_fail else 0


if __name__ == "__main__":
    sys.exit(main())
