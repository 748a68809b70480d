#!/usr/bin/env python3
"""Decode Intel MPI's binary collective tuning files (tuning_*.dat).

Usage: scripts/intelmpi/impi_tuning.py FILE.dat            # one line per leaf
       scripts/intelmpi/impi_tuning.py --ch4 FILE.dat      # the composition level only

FILE is what Intel MPI 2019 U4+ / 2021 ship in etc/ (or what
I_MPI_TUNING_BIN_DUMP writes: the same bytes, not JSON): zlib-compressed, a
tree of fixed-layout records, little-endian. The layout was read off the
bytes and checked by loading JSON tunings of known content into the library
(I_MPI_TUNING) and dumping them (I_MPI_TUNING_BIN_DUMP): see
preset_experiment.sh and docs/sources/intelmpi-tuning.md.

Inner node (40 bytes + 8 per child):
    i64 parent offset (-1 at the root) | u32 depth | u32 kind | i64 value |
    u32 capacity | u32 count | u32 0xEEEEEEEE | u32 (unused) | u64 child offsets[capacity]
Leaf (40 bytes + 20 per entry):
    i64 parent | u32 depth | 12 bytes (unused) | u32 capacity | u32 count |
    u32 0xCCCCCCCC | u32 (unused) | entries[capacity] of 5 x i32
Kinds: 1 root, 2 and 3 the composition part's two wrapper levels, 4 the
level (1 under kind 3: the composition ("ch4") table; 0: its defaults; the
root's own kind-4 children 2 and 3: the netmod and shm tables), 5 the
collective (0 allgather, 1 allgatherv, 2 allreduce, 3 alltoall, 4
alltoallv, 5 alltoallw, 6 barrier, 7 bcast, 8 exscan, 9 gather, 10 gatherv,
11 reduce_scatter, 12 reduce, 13 scan, 14 scatter, 15 scatterv, 16
reduce_scatter_block, then the non-blocking ones), 6 ppn, 9 comm_size, 7
comm_id, 8 msg_size; -1 (and 2147483647 for comm_size) is "any".
A leaf's entries: at the composition level, entry 0 is the composition id
and the others the algorithms (with parameters) of its parts, -1 meaning
"the netmod or shm table decides"; at the netmod and shm levels, one entry:
the algorithm id and its parameters.
"""

import struct
import sys
import zlib

KIND_NAMES = {1: "root", 2: "k2", 3: "k3", 4: "level", 5: "coll", 6: "ppn", 9: "comm_size", 7: "comm_id", 8: "msg_size"}
INNER = 0xEEEEEEEE
LEAF = 0xCCCCCCCC


def load(path):
    raw = open(path, "rb").read()
    try:
        return zlib.decompress(raw)
    except zlib.error:
        return raw


def node(data, off):
    parent, depth = struct.unpack_from("<qI", data, off)
    if struct.unpack_from("<I", data, off + 32)[0] == INNER:
        kind, value, cap, count = struct.unpack_from("<IqII", data, off + 12)
        kids = struct.unpack_from("<%dQ" % count, data, off + 40)
        return {"kind": kind, "value": value, "kids": kids}
    cap, count, marker = struct.unpack_from("<III", data, off + 24)
    if marker != LEAF:
        raise ValueError("no node at offset %#x" % off)
    entries = [struct.unpack_from("<5i", data, off + 40 + 20 * i) for i in range(count)]
    return {"leaf": entries}


def leaves(data):
    """Every leaf as (path, entries); path is a tuple of (kind name, value)."""
    out = []
    stack = [(0, ())]
    while stack:
        off, path = stack.pop()
        n = node(data, off)
        if "leaf" in n:
            out.append((path, n["leaf"]))
            continue
        here = path + ((KIND_NAMES.get(n["kind"], str(n["kind"])), n["value"]),)
        for k in reversed(n["kids"]):
            stack.append((k, here))
    return out


def ch4_rows(data):
    """The composition-level table: (coll, ppn, comm_size, msg_size, entries)."""
    rows = []
    for path, entries in leaves(data):
        d = dict(path)
        if d.get("k3") == 0 and d.get("level") == 1:
            rows.append((d["coll"], d["ppn"], d["comm_size"], d["msg_size"], entries))
    return rows


def net_rows(data):
    """The netmod-level table: (coll, ppn, comm_size, msg_size, entries)."""
    rows = []
    for path, entries in leaves(data):
        d = dict(path)
        if "k2" not in d and d.get("level") == 2:
            rows.append((d["coll"], d["ppn"], d["comm_size"], d["msg_size"], entries))
    return rows


def strip(e):
    vals = list(e)
    while len(vals) > 1 and vals[-1] == 0:
        vals.pop()
    return ",".join(str(v) for v in vals)


def main():
    args = sys.argv[1:]
    ch4 = "--ch4" in args
    args = [a for a in args if a != "--ch4"]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    data = load(args[0])
    if ch4:
        print("coll\tppn\tcomm_size\tmsg_size\tleaf")
        for coll, ppn, np_, msg, entries in ch4_rows(data):
            print("%d\t%d\t%d\t%d\t%s" % (coll, ppn, np_, msg, " ".join(strip(e) for e in entries)))
    else:
        for path, entries in leaves(data):
            print(" ".join("%s=%d" % kv for kv in path[1:]), "->", " ".join(strip(e) for e in entries))
    return 0


if __name__ == "__main__":
    sys.exit(main())
