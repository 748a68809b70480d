#!/usr/bin/env python3
"""Predict the real runs of a rounds.sh output again, with other settings.

    python3 validation/dev-machine/repredict.py OUT_DIR [--noise SEED] [--parsim PATH]

For every round-R/validate-PROG.txt of OUT_DIR (written by rounds.sh), the
measured medians are read back and every point is predicted again with
`parsim run` on that round's machine and blocks files, with `--noise SEED`
or without noise: the same measurements compared with two ways of
predicting them (VALIDATION.md section 3.0f). Prints one line per round and
program (median and max |error|) and every point's error.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROW = re.compile(r"^\s+(\d+)\s+((?:\w+=\S+\s)+)\s*([0-9.]+)\s+[0-9.]+ \.\. [0-9.]+\s+([0-9.]+)\s+([+-][0-9.]+)%")


def rows(path):
    out = []
    with open(path) as f:
        for line in f:
            m = ROW.match(line)
            if m:
                ranks, params, measured = int(m.group(1)), m.group(2).split(), float(m.group(3))
                out.append((ranks, params, measured, float(m.group(4))))
    return out


def predict(parsim, prog, ranks, params, machine, blocks, noise):
    cmd = [parsim, "run", os.path.join(ROOT, f"examples/{prog}.mpl"), "-n", str(ranks),
           "--machine", machine, "--blocks", blocks, "--format", "json"]
    for p in params:
        cmd += ["-p", p]
    if noise is not None:
        cmd += ["--noise", str(noise)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    return json.loads(p.stdout)["predicted_seconds"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--noise", type=int)
    ap.add_argument("--parsim", default=os.path.join(ROOT, "target/release/parsim"))
    args = ap.parse_args()
    rounds = sorted(d for d in os.listdir(args.out) if d.startswith("round-"))
    if not rounds:
        sys.exit(f"{args.out}: no round-R directories")
    for rd in rounds:
        d = os.path.join(args.out, rd)
        for prog in ["heat", "jacobi", "net"]:
            path = os.path.join(d, f"validate-{prog}.txt")
            if not os.path.exists(path):
                continue
            errors = []
            cells = []
            for ranks, params, measured, _ in rows(path):
                t = predict(args.parsim, prog, ranks, params, os.path.join(d, "machine.toml"),
                            os.path.join(d, f"blocks-{prog}.toml"), args.noise)
                e = (t - measured) / measured
                errors.append(abs(e))
                cells.append(f"{ranks}:{params[0]} {e:+.1%}")
            if not errors:
                sys.exit(f"{path}: no rows read")
            print(f"{rd} {prog}: median |error| {statistics.median(errors):.1%}, "
                  f"max {max(errors):.1%}  ({'; '.join(cells)})")


if __name__ == "__main__":
    main()
