#!/usr/bin/env python3
"""Write a copy of a tuning file in which one collective runs one netmod algorithm.

Usage: patch_netmod.py IN.dat OUT.dat COLL PPN COMM_SIZE NET_COMM_SIZE ALG FLAT_COMPOSITION

For collective COLL (5-level id: 2 allreduce, 7 bcast, 12 reduce, ...) the
composition-level leaves under ppn=PPN, comm_size=COMM_SIZE that have room for
two entries become "FLAT_COMPOSITION -1" (the flat netmod composition: 2 for
allreduce and reduce, 3 for bcast; -1: the netmod table decides), and every
netmod-level leaf under ppn=PPN, comm_size=NET_COMM_SIZE becomes ALG (an id
with its parameters, "2,2,4096,0,2"). Load OUT with I_MPI_TUNING_BIN; pick
COMM_SIZE and NET_COMM_SIZE as the keys the run's communicator takes (the
first at least its size). The leaves are patched in place: their sizes do not
change.
"""

import struct
import sys
import zlib
import pathlib

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import impi_tuning as it  # noqa: E402


def main():
    if len(sys.argv) != 9:
        print(__doc__, file=sys.stderr)
        return 2
    src, dst = sys.argv[1], sys.argv[2]
    coll, ppn, np_, net_np = (int(v) for v in sys.argv[3:7])
    alg = [int(x) for x in sys.argv[7].split(",")] + [0] * 5
    flat = int(sys.argv[8])
    data = bytearray(it.load(src))
    leaves = []

    def walk(off, path):
        n = it.node(data, off)
        if "leaf" in n:
            leaves.append((off, dict(path)))
            return
        here = path + [(it.KIND_NAMES.get(n["kind"], str(n["kind"])), n["value"])]
        for k in n["kids"]:
            walk(k, here)

    walk(0, [])
    ch4, net = [], []
    for off, d in leaves:
        if d.get("coll") != coll or d.get("ppn") != ppn:
            continue
        cap = struct.unpack_from("<I", data, off + 24)[0]
        if d.get("k3") == 0 and d.get("level") == 1 and d.get("comm_size") == np_ and cap >= 2:
            struct.pack_into("<5i", data, off + 40, flat, 0, 0, 0, 0)
            struct.pack_into("<5i", data, off + 60, -1, 0, 0, 0, 0)
            struct.pack_into("<I", data, off + 28, 2)
            ch4.append(d["msg_size"])
        elif "k2" not in d and d.get("level") == 2 and d.get("comm_size") == net_np:
            struct.pack_into("<5i", data, off + 40, *alg[:5])
            net.append(d["msg_size"])
    open(dst, "wb").write(zlib.compress(bytes(data)))
    print("composition rows (msg_size bounds):", ch4, "netmod rows:", net, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
