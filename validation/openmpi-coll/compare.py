#!/usr/bin/env python3
"""Compare parsim's collective schedules with the real library's messages.

Reads what `measure.sh` recorded (MEASURED: lines "kind bytes rank peer
messages bytes", the point-to-point messages each rank sent during one call
of the collective, counted by Open MPI's pml monitoring), runs the same call
in parsim on every rank count with the library's rules, and compares the
(source, destination) -> (messages, bytes) matrices.

Usage: compare.py MEASURED_DIR LIBRARY [PARSIM]
  MEASURED_DIR holds p<P>.txt files; LIBRARY is parsim's name for the
  library's rules (openmpi-5, openmpi-4.1). Prints one line per call that
  differs and a summary; exit status 1 if any differs.
"""
import collections
import csv
import os
import subprocess
import sys
import tempfile

REDUCTIONS = {"allreduce", "reduce", "reduce_scatter", "scan", "exscan"}


ROOTED = {"bcast", "reduce", "gather", "scatter"}


def call(kind, n, root):
    elem = ", elem: 4" if kind in REDUCTIONS else ""
    if kind == "barrier":
        return "barrier()"
    at = f"root: {root}, " if kind in ROOTED and root else ""
    return f"{kind}({at}bytes: {n}{elem})"


def machine(library, ranks):
    return f"""name = "compare"
description = "{ranks} ranks per node, {library} rules (compare.py)"
model = "smp"
[node]
memcpy = "10 GB/s"
ranks_per_node = {ranks}
[network]
latency = "1 us"
send_overhead = "0.1 us"
recv_overhead = "0.1 us"
bandwidth = "10 GB/s"
mtu = "unlimited"
eager_limit = "4 KiB"
control_bytes = "64 B"
[shm]
latency = "0.2 us"
send_overhead = "0.1 us"
recv_overhead = "0.1 us"
bandwidth = "10 GB/s"
mtu = "unlimited"
eager_limit = "4 KiB"
control_bytes = "64 B"
[collectives]
library = "{library}"
"""


def simulate(parsim, library, kind, n, p, rpn, root, tmp):
    prog = os.path.join(tmp, "one.mpl")
    with open(prog, "w") as f:
        f.write(call(kind, n, root) + "\n")
    mach = os.path.join(tmp, f"m{rpn}.toml")
    if not os.path.exists(mach):
        with open(mach, "w") as f:
            f.write(machine(library, rpn))
    out = os.path.join(tmp, "cm.csv")
    subprocess.run([parsim, "run", prog, "--ranks", str(p), "--machine", mach, "-q",
                    "--comm-matrix", out], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    m = {}
    with open(out) as f:
        for row in csv.DictReader(f):
            m[(int(row["source"]), int(row["destination"]))] = (int(row["messages"]), int(row["bytes"]))
    return m


def main():
    d, library = sys.argv[1], sys.argv[2]
    parsim = sys.argv[3] if len(sys.argv) > 3 else "target/release/parsim"
    def layout(f):
        # p<P>.txt: P ranks on one node; p<P>-rpn<K>.txt: K ranks per node;
        # either with -root<R>: the rooted collectives' root
        stem = f[1:-4]
        root = 0
        if "-root" in stem:
            stem, r = stem.split("-root")
            root = int(r)
        if "-rpn" in stem:
            p, k = stem.split("-rpn")
            return int(p), int(k), root
        return int(stem), int(stem), root
    files = sorted((f for f in os.listdir(d) if f.startswith("p") and f.endswith(".txt")),
                   key=layout)
    total = bad = 0
    by_kind = collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for fname in files:
            p, rpn, root = layout(fname)
            # The header lists every call made, those that sent nothing
            # included (they have no lines); then one line per (call, rank,
            # peer) that sent something.
            meas = {}
            with open(os.path.join(d, fname)) as f:
                header = f.readline()
                if not header.startswith("# calls:"):
                    sys.exit(f"{fname}: no '# calls:' header (not written by measure.sh)")
                for item in header.split(":", 1)[1].split():
                    kind, n = item.split("@")
                    meas[(kind, int(n))] = {}
                for line in f:
                    kind, n, r, q, msgs, nbytes = line.split()
                    meas[(kind, int(n))][(int(r), int(q))] = (int(msgs), int(nbytes))
            order = list(meas)
            for kind, n in order:
                got = simulate(parsim, library, kind, n, p, rpn, root, tmp)
                want = meas[(kind, n)]
                total += 1
                if got != want:
                    bad += 1
                    by_kind[kind] += 1
                    wm = sum(v[0] for v in want.values()); wb = sum(v[1] for v in want.values())
                    gm = sum(v[0] for v in got.values()); gb = sum(v[1] for v in got.values())
                    diff = sorted(set(want) ^ set(got))[:4]
                    print(f"p={p} rpn={rpn} root={root} {kind} {n} B: measured {wm} msgs {wb} B, parsim {gm} msgs {gb} B; "
                          f"pairs only in one: {diff}")
    print(f"{library}: {total - bad} of {total} calls match message for message; differ by kind: {dict(by_kind)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
