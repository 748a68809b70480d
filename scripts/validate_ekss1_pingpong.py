#!/usr/bin/env python3
"""Compare parsim's PingPong prediction with the EKSS-1 measurements.

Usage: scripts/validate_ekss1_pingpong.py [MACHINE.toml] [PARSIM]

Runs examples/pingpong.mpl between two ranks on two different nodes (the
machine file is copied with ranks_per_node = 1, PMB's "1ppn") for every
message size of ../shared/validation/ekss1/pmb_pingpong_1ppn.csv and prints
a Markdown table: size, measured, predicted, relative error, then the median
and maximum absolute relative error. Nothing is fitted: the machine file is
used as it is.
"""

import csv
import json
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "validation" / "ekss1" / "pmb_pingpong_1ppn.csv"


def main() -> int:
    machine = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "examples/machines/sci.toml"
    parsim = sys.argv[2] if len(sys.argv) > 2 else str(ROOT / "target/release/parsim")
    text = machine.read_text()
    text = re.sub(r"(?m)^ranks_per_node\s*=.*$", "ranks_per_node = 1", text)
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(text)
        one_ppn = f.name
    rows = []
    with DATA.open() as f:
        for row in csv.DictReader(f):
            size = int(row["bytes"])
            measured = float(row["ekss1_t_usec"])
            out = subprocess.run(
                [parsim, "run", str(ROOT / "examples/pingpong.mpl"), "--ranks", "2",
                 "--machine", one_ppn, "--format", "json",
                 "--param", f"bytes={size}", "--param", "reps=10"],
                check=True, capture_output=True, text=True,
            )
            rep = json.loads(out.stdout)
            predicted = float(rep["output"][0]["text"].split()[2])
            rows.append((size, measured, predicted, (predicted - measured) / measured))
    print(f"machine: {machine.relative_to(ROOT) if machine.is_relative_to(ROOT) else machine} (ranks_per_node = 1)")
    print()
    print("| bytes | measured (us) | predicted (us) | error |")
    print("| ---: | ---: | ---: | ---: |")
    for size, m, p, e in rows:
        print(f"| {size} | {m:.2f} | {p:.2f} | {e * 100:+.1f}% |")
    errs = [abs(e) for *_, e in rows]
    print()
    print(f"points: {len(rows)}, median |error| {statistics.median(errs) * 100:.1f}%, "
          f"max |error| {max(errs) * 100:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
