#!/usr/bin/env python3
"""The hottest SASS instructions of a kernel profiled by Nsight Compute.

  ncu --clock-control none -k regex:NAME -c 1 --set full -o REP PROGRAM ...
  ncu -i REP.ncu-rep --page source --print-source sass --csv > SRC.csv
  tools/ncu-hot.py SRC.csv [TOP]

prints the TOP (default 40) instructions by warp-stall samples, each with
its address, its share of all samples and two instructions either side:
where a kernel's time goes when there are no hardware counters to spare
for more (docs/performance.md, "How we measure").
"""
import csv
import sys


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f)]
    # the header: the first row naming a "Source" column
    h = next(i for i, r in enumerate(rows) if "Source" in r)
    head, body = rows[h], rows[h + 1:]
    src = head.index("Source")
    addr = head.index("Address") if "Address" in head else None
    col = next((i for i, c in enumerate(head)
                if c.startswith("Warp Stall Sampling (All")), None)
    if col is None:
        print("no stall-sampling column; columns:", head)
        return 1

    def num(r):
        try:
            return float(r[col].replace(",", ""))
        except (ValueError, IndexError):
            return 0.0

    total = sum(num(r) for r in body) or 1.0
    order = sorted(range(len(body)), key=lambda i: -num(body[i]))[:top]
    print(f"{len(body)} instructions, {total:.0f} samples")
    for i in sorted(order):
        lo, hi = max(0, i - 2), min(len(body), i + 3)
        print(f"--- {100 * num(body[i]) / total:5.1f}%")
        for j in range(lo, hi):
            a = body[j][addr] if addr is not None else str(j)
            mark = ">" if j == i else " "
            print(f"{mark} {a:>6} {num(body[j]):6.0f} {body[j][src]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
