#!/usr/bin/env python3
"""Merges several IMB-MPI1 outputs of one benchmark into one table: per
size, the median of each of the last three columns (t_min, t_max, t_avg),
the other columns and every non-numeric line as in the first output.

    python3 imb_median.py OUT "HEADER" BENCHMARK FILE [FILE ...]

OUT gets "# HEADER" and the merged block of BENCHMARK ("# Benchmarking
BENCHMARK" up to the next benchmark). Used by imb-real.sh and
impi-shm.sh."""
import re
import statistics
import sys


def block(lines, name):
    out, on = [], False
    for line in lines:
        if line.startswith("# Benchmarking "):
            on = line.split()[2] == name
        if on:
            out.append(line)
    return out


def numbers(line):
    p = line.split()
    return p if p and all(re.fullmatch(r"[0-9.]+", x) for x in p) else None


def key(p):
    # A collective's row starts with its byte count (5 columns); Barrier's
    # has none (4 columns).
    return p[0] if len(p) == 5 else "-"


def main():
    out, header, name, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    runs = [block(open(f).read().splitlines(), name) for f in files]
    cols = {}
    for lines in runs:
        for line in lines:
            p = numbers(line)
            if p:
                cols.setdefault(key(p), []).append([float(x) for x in p[-3:]])
    with open(out, "w") as o:
        o.write(f"# {header}\n")
        for line in runs[0]:
            p = numbers(line)
            if p:
                med = [statistics.median(v[i] for v in cols[key(p)]) for i in range(3)]
                o.write("".join(f"{x:>13}" for x in p[:-3]) + "".join(f"{m:>13.2f}" for m in med) + "\n")
            else:
                o.write(line + "\n")


if __name__ == "__main__":
    main()
