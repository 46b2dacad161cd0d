#!/usr/bin/env bash
# The machine code (SASS) of a generated kernel, on a machine without a
# GPU: nvcc and ptxas come with the CUDA toolkit, the disassembler does not
# (nvdisasm is not in the Debian toolkit here), so the first use installs
# NVIDIA's `nvidia-cuda-nvdisasm` wheel from PyPI by name into .tools/
# (ignored; nothing is copied into the repository).
#
#   tools/sass.sh FILE.cu [KERNEL-REGEX] [-- NVCC-FLAGS...]
#
# FILE.cu: purlinc's output for sm_90 (e.g. gen-epi/all_reduce_rmsnorm_direct.purlin.cu;
# its folder is on the include path). Prints, for every kernel whose
# mangled name matches KERNEL-REGEX (default: every planKernel): ptxas's
# registers and spills, the instruction count, local-memory loads and
# stores (spills and stack arrays), calls, barriers, and, in a build with
# -DPURLIN_EPI_TIMING, the instructions between each pair of clock reads
# (the register row's steps of exec/Epilogue.h, in code order); with
# SASS_LIVE=1 also the peak of live registers and where it is (the
# stretches of instructions near it, by their opcodes). The cubin
# and the full listing stay in $SASS_DIR (default /tmp/purlin-sass) for
# reading. Static counts, not times: a loop's body counts once.
#
# Example (the fused one-shot row, bf16 plan 0, with the timing marks):
#   tools/sass.sh gen-epi/all_reduce_rmsnorm_direct.purlin.cu 'ElemBF16.*PlanFn_p0' -- -DPURLIN_EPI_TIMING
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
[ $# -ge 1 ] || { sed -n 2,22p "$0"; exit 2; }
CU=$1; shift
RE='planKernel'
if [ $# -ge 1 ] && [ "$1" != "--" ]; then RE=$1; shift; fi
[ $# -ge 1 ] && [ "$1" = "--" ] && shift
EXTRA=("$@")
[ -f "$CU" ] || { echo "sass.sh: no such file: $CU" >&2; exit 2; }
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "sass.sh: nvcc not found (set NVCC)" >&2; exit 2; }

# The disassembler: a PyPI wheel, installed once into .tools/.
TOOLS=$ROOT/.tools/cuda-binutils
NVDISASM=$(ls "$TOOLS"/nvidia/cu*/bin/nvdisasm 2>/dev/null | head -1 || true)
if [ -z "$NVDISASM" ]; then
  echo "sass.sh: installing nvidia-cuda-nvdisasm (PyPI) into .tools/" >&2
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$TOOLS" nvidia-cuda-nvdisasm >&2
  NVDISASM=$(ls "$TOOLS"/nvidia/cu*/bin/nvdisasm | head -1)
fi
chmod +x "$NVDISASM"

OUTD=${SASS_DIR:-/tmp/purlin-sass}
mkdir -p "$OUTD"
base=$(basename "$CU" .cu)
"$NVCC" -O3 -DNDEBUG -arch=sm_90 -cubin -std=c++17 -Xptxas -v \
  -I"$ROOT/spec/include" -I"$ROOT/runtime/core/include" -I"$ROOT/runtime/include" \
  -I"$ROOT/atom-kernels" -I"$(dirname "$CU")" "${EXTRA[@]}" "$CU" \
  -o "$OUTD/$base.cubin" 2> "$OUTD/$base.ptxas"
"$NVDISASM" -c "$OUTD/$base.cubin" > "$OUTD/$base.sass"
# SASS_LIVE=1: the live registers at each instruction too (nvdisasm's life
# ranges), so that the report can say where a kernel's register peak is.
LIVE=
if [ -n "${SASS_LIVE:-}" ]; then
  LIVE=$OUTD/$base.live
  "$NVDISASM" -lrm count -c "$OUTD/$base.cubin" > "$LIVE"
fi

python3 - "$OUTD/$base.sass" "$OUTD/$base.ptxas" "$RE" "$LIVE" <<'EOF'
import re, sys
sass, ptxas, pat = sys.argv[1], sys.argv[2], re.compile(sys.argv[3])
live = sys.argv[4] if len(sys.argv) > 4 else ""
# Live registers per instruction of each kernel (SASS_LIVE=1): nvdisasm -lrm
# count ends each instruction's line with "// | N |".
lives, lname = {}, None
if live:
    for line in open(live):
        m = re.match(r"^\.text\.([\w$.]+):", line)
        if m:
            lname = m.group(1); lives[lname] = []
            continue
        m = re.match(r"^\s+/\*([0-9a-f]+)\*/\s+(.*?);.*//\s*\|\s*(\d+)", line)
        if lname and m:
            lives[lname].append((int(m.group(3)), m.group(2).strip()))
# ptxas -v: "Compiling entry function 'K'" then its properties and usage.
props, cur = {}, None
for line in open(ptxas):
    m = re.search(r"Compiling entry function '([^']+)'", line)
    if m:
        cur = m.group(1); props[cur] = []
        continue
    if cur and ("bytes stack frame" in line or "Used" in line) and len(props[cur]) < 2:
        props[cur].append(line.strip().replace("ptxas info    : ", ""))
# The listing: a kernel's text, and its subroutines ($K$f), in sections.
funcs, name = {}, None
for line in open(sass):
    m = re.match(r"^(\$?[_A-Za-z][\w$.]*):\s*$", line)
    if m and not m.group(1).startswith((".L", ".text")):
        name = m.group(1); funcs[name] = []
        continue
    if name and re.match(r"^\s+/\*[0-9a-f]+\*/\s", line):
        funcs[name].append(re.sub(r"^\s+/\*[0-9a-f]+\*/\s+", "", line).split(";")[0].strip())
shown = 0
for k in sorted(props):
    if not pat.search(k):
        continue
    shown += 1
    body = funcs.get(k, [])
    subs = {f: b for f, b in funcs.items() if f.startswith("$" + k + "$")}
    def count(ins, what):
        return sum(1 for i in ins if re.search(what, i))
    print(f"== {k}")
    for p in props[k]:
        print("   ptxas:", p)
    LDL, STL, CALL, BAR = r"\bLDL", r"\bSTL", r"\bCALL", r"\bBAR"
    nsub = sum(len(b) for b in subs.values())
    print(f"   instructions {len(body)} (+ {nsub} in {len(subs)} subroutines); "
          f"local loads {count(body, LDL)}, stores {count(body, STL)}; "
          f"calls {count(body, CALL)}; barriers {count(body, BAR)}")
    for f, b in sorted(subs.items()):
        nloc = count(b, LDL) + count(b, STL)
        print(f"   sub {f.split('$')[-1][:70]}: {len(b)} instructions, local {nloc}")
    lv = lives.get(k, [])
    if lv:
        # The stretches within 8 registers of the peak, in code order, each
        # with what it does most (opcodes) so that it can be found in the
        # source: e.g. many PRMT / IMAD.U32 after LDG.E.128 are bf16
        # vectors being widened.
        peak = max(n for n, _ in lv)
        runs, cur = [], None
        for i, (n, ins) in enumerate(lv):
            if n >= peak - 8:
                if cur and i - cur[1] <= 4:
                    cur[1] = i; cur[2] = max(cur[2], n)
                else:
                    cur = [i, i, n]; runs.append(cur)
        print(f"   live registers: peak {peak}; {len(runs)} stretch(es) within 8 of it:")
        for a, b, n in runs[:8]:
            ops = {}
            for _, ins in lv[a:b + 1]:
                op = re.sub(r"^@!?U?P\w+\s+", "", ins).split()[0]
                ops[op] = ops.get(op, 0) + 1
            top = ", ".join(f"{o} {c}" for o, c in sorted(ops.items(), key=lambda x: -x[1])[:5])
            print(f"     instructions {a}-{b} (max {n}): {top}")
    marks = [i for i, ins in enumerate(body) if "SR_CLOCKLO" in ins]
    if len(marks) > 1:
        print("   between clock reads (code order):",
              ", ".join(str(b - a) for a, b in zip(marks, marks[1:])))
if not shown:
    print("sass.sh: no kernel matches", sys.argv[3], file=sys.stderr)
    sys.exit(1)
print(f"(listing: {sass})")
EOF
