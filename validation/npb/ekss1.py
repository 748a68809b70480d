#!/usr/bin/env python3
"""Predictions of the NAS Parallel Benchmarks on EKSS-1 (VALIDATION.md
section 6.2), from the skeletons in examples/npb/ on
examples/machines/ekss1.toml:

    python3 validation/npb/ekss1.py [path/to/parsim]

Compute: one coefficient per benchmark and class, the skeleton's `op_time`,
chosen so that the one-process prediction equals EKSS-1's measured
one-process time of NPB 2.3 (../shared/validation/ekss1/npb23_1proc.csv;
the prediction is affine in op_time, so two simulations give it). This
assumes that the time per counted operation does not change with the
process count: the per-rank working set shrinks as P grows and fits
the 256 KiB L2 cache of a Pentium III better, so where that matters the
predictions at large P are too slow (superlinear speed-ups are not
predicted). NPB 2.3 and 3.3 make the same MPI calls in these six
benchmarks' timed regions (the skeletons follow 3.3).

Predictions at 2, 4, 8, 16 and 32 processes (BT and SP: 4, 9, 16 and 25),
one per node (up to 16, the nodes EKSS-1 has) and two per node (--ppn 2),
for every benchmark and
class in the table whose skeleton exists. The measured times at these
counts are held out; these are predictions, recorded with their command.
Writes validation/npb/ekss1-predictions.csv and prints a Markdown table.
"""
import csv
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PARSIM = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/release/parsim")
MACHINE = os.path.join(ROOT, "examples/machines/ekss1.toml")
TABLE = os.path.join(ROOT, "../shared/validation/ekss1/npb23_1proc.csv")
OUT = os.path.join(ROOT, "validation/npb/ekss1-predictions.csv")
TIME_RE = re.compile(r"Time in seconds =\s*([0-9.eE+-]+)")
# Benchmarks that run on square process counts only (setparams.c).
SQUARE = {"bt", "sp"}


def simulate(bench, cls, procs, ppn, op_time):
    cmd = [PARSIM, "run", os.path.join(ROOT, f"examples/npb/{bench}.mpl"), "-n", str(procs),
           "--ppn", str(ppn), "--machine", MACHINE, "--param", f"class={cls}",
           "--param", f"op_time={op_time!r}", "-q"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    m = TIME_RE.search(p.stdout)
    if p.returncode != 0 or not m:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stdout}\n{p.stderr}")
    return float(m.group(1))


def main():
    measured = {}
    with open(TABLE) as f:
        for row in csv.DictReader(f):
            measured[(row["benchmark"].lower(), row["class"])] = float(row["seconds"])
    cases = sorted(k for k in measured
                   if os.path.exists(os.path.join(ROOT, f"examples/npb/{k[0]}.mpl")))
    rows = []
    # BT and SP run on square process counts only; the others on powers of
    # two. EKSS-1 has 16 nodes: one process per node up to 16.
    families = [
        ("powers of two", [c for c in cases if c[0] not in SQUARE],
         [(p, ppn) for p in (2, 4, 8, 16, 32) for ppn in (1, 2) if not (ppn == 1 and p > 16)]),
        ("squares", [c for c in cases if c[0] in SQUARE],
         [(p, ppn) for p in (4, 9, 16, 25) for ppn in (1, 2) if not (ppn == 1 and p > 16)]),
    ]
    for _, family, counts in families:
        if not family:
            continue
        print("| benchmark | class | 1 process measured (s) | op_time (ns) | "
              + " | ".join(f"{p} ({ppn}/node)" for p, ppn in counts) + " |")
        print("| --- " * (4 + len(counts)) + "|")
        for bench, cls in family:
            t1 = measured[(bench, cls)]
            a, b = 1e-9, 2e-9
            ta, tb = simulate(bench, cls, 1, 1, a), simulate(bench, cls, 1, 1, b)
            op = a + (t1 - ta) / ((tb - ta) / (b - a))
            check = simulate(bench, cls, 1, 1, op)
            assert abs(check - t1) <= 1e-6 * t1, (bench, cls, check, t1)
            cells = []
            for p, ppn in counts:
                t = simulate(bench, cls, p, ppn, op)
                rows.append((bench.upper(), cls, p, ppn, op, t))
                cells.append(f"{t:.2f}")
            print(f"| {bench.upper()} | {cls} | {t1:.2f} | {op * 1e9:.3f} | "
                  + " | ".join(cells) + " |", flush=True)
        print()
    with open(OUT, "w") as f:
        f.write("# NPB predictions on EKSS-1 (validation/npb/ekss1.py); measured: held out\n")
        f.write("benchmark,class,procs,procs_per_node,op_time_seconds,predicted_seconds\n")
        for r in rows:
            f.write(f"{r[0]},{r[1]},{r[2]},{r[3]},{r[4]!r},{r[5]!r}\n")
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
