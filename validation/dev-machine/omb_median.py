#!/usr/bin/env python3
"""Merges the runs of OMB benchmarks into one table each: per size, the
median of the runs' last column, in OMB's own format (a benchmark with no
sizes, osu_barrier, as one number).

    python3 omb_median.py DIR BENCH [BENCH ...]

reads DIR/runs/BENCH.*.txt and writes DIR/measured-BENCH.txt, the
comment lines taken from BENCH.1.txt. Used by osu-real.sh and
osu-ompi.sh."""
import collections
import glob
import statistics
import sys

d = sys.argv[1]
for b in sys.argv[2:]:
    rows, head = collections.OrderedDict(), []
    for f in sorted(glob.glob(f"{d}/runs/{b}.*.txt")):
        for line in open(f):
            if line.startswith("#"):
                if f.endswith(".1.txt"):
                    head.append(line)
            elif line.strip():
                parts = line.split()
                rows.setdefault(parts[0] if len(parts) == 2 else "-", []).append(float(parts[-1]))
    with open(f"{d}/measured-{b}.txt", "w") as o:
        o.write("".join(head))
        for k, v in rows.items():
            m = statistics.median(v)
            o.write(f"{m:>20.2f}\n" if k == "-" else f"{k:<10} {m:>12.2f}\n")
