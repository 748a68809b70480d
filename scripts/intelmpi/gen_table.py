#!/usr/bin/env python3
"""Generate sim-core/src/coll/intelmpi/table.rs from an Intel MPI tuning file.

Usage: scripts/intelmpi/gen_table.py TUNING.dat | rustfmt --edition 2024 > sim-core/src/coll/intelmpi/table.rs

TUNING.dat is Intel MPI 2021.x's etc/tuning_generic_shm-ofi.dat (the same
bytes as 2019 Update 4's etc/tuning_skx_shm-ofi.dat; md5
954a28b658f56870b7c069a3a1943cce), e.g. from
`pip download impi-rt==2021.13.1 --no-deps` (data/opt/mpi/etc/).

Reads the composition ("ch4") level of the file with impi_tuning.py and
keeps the collectives parsim's `intelmpi-*` libraries select from the table
(allgather, allreduce, alltoall, barrier, bcast, gather, reduce, scatter).
Every leaf is mapped to a `Pick` by LEAF_MAP below, which says for each
leaf which I_MPI_ADJUST preset it is (preset_experiment.py) and what parsim
runs for it; a leaf the map does not know stops the script, so a new table
cannot be half-translated. Consecutive message-size rows with the same pick
are merged. The source is docs/sources/intelmpi-tuning.md.
"""

import hashlib
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import impi_tuning  # noqa: E402

COLLS = {0: "ALLGATHER", 2: "ALLREDUCE", 3: "ALLTOALL", 6: "BARRIER", 7: "BCAST", 9: "GATHER",
         12: "REDUCE", 14: "SCATTER"}

MPIR = "Pick::Mpir"
NETMOD = "Pick::Netmod"


def alg(name):
    return "Pick::Alg(A::%s)" % name


def shm(spec):
    """A topology-aware composition whose node parts run through shared
    memory, on the tree of `spec` ("T,K": T 0 flat, 1 knomial, 2 knary; K
    the radix; "" flat), as Intel's presets name them ("topology aware
    SHM-based flat / Knomial / Knary")."""
    vals = [int(v) for v in spec.split(",") if v != ""]
    kind = {0: "Flat", 1: "Knomial", 2: "Kary"}[vals[0] if vals else 0]
    radix = vals[1] if len(vals) > 1 and kind != "Flat" else 0
    return ("Pick::Alg(A::ShmAlpha(ShmTrees::both(ShmTree { kind: TreeKind::%s, radix: %d })))"
            % (kind, radix))


def leaf_map(coll, leaf):
    """The Pick of one composition-level leaf (entries as impi_tuning.strip writes them)."""
    parts = leaf.split(" ")
    comp = parts[0]
    args = parts[1:]
    first = args[0].split(",")[0] if args else None
    if coll == 0:  # allgather
        if comp == "1":
            return {"1": alg("RecursiveDoubling"),  # preset 1 recursive doubling
                    "2": alg("Bruck"),  # preset 2 Bruck's
                    "3": alg("Ring"),  # preset 3 ring
                    "4": alg("Bruck"),  # preset 5 knomial (radix in the leaf): Bruck's pattern for radix 2
                    "0": MPIR}[first]  # netmod auto
        if comp == "3":
            return MPIR  # preset 4 topology-aware gatherv + bcast: not modelled
    # A flat composition (allreduce and reduce 2, bcast 3) names a netmod
    # algorithm: the ids of the netmod table (allreduce 7 recursive doubling
    # = preset 1, 12 Rabenseifner's = 2, 11 ring = 8, 10 Shumilin's ring =
    # 7; bcast 3 binomial = 1, 4 recursive doubling = 2, 5 ring = 3, 10
    # Shumilin's = 7, 1 knomial = 8; reduce 6 Shumilin's = 1, 3 binomial = 2,
    # 4 Rabenseifner's = 5, 1 knomial = 7), or -1: the netmod table decides.
    flat = {2: "2", 7: "3", 12: "2"}
    if coll in flat and comp == flat[coll]:
        return NETMOD if first == "-1" else net_map(coll, args[0])
    if coll == 2:  # allreduce
        if comp == "8":
            return alg("NonOverlapping")  # preset 3 reduce + bcast
        if comp == "4":
            return alg("NonOverlapping")  # preset 5 binomial gather + scatter
        if comp.startswith("6,"):
            return shm(comp[2:])  # presets 10-12 SHM-based flat, knomial, knary
        if comp == "1":
            return alg("Ch4Alpha")  # preset 4 topology-aware reduce + bcast
        if comp == "3":
            return MPIR  # one node: the shm table decides
    if coll == 3:  # alltoall
        if comp == "1":
            if first == "2":
                throttle = args[0].split(",")[1] if "," in args[0] else "0"
                return alg("Linear") if throttle == "0" else alg("Scattered")  # preset 2 isend/irecv + waitall
            return {"1": alg("Bruck"),  # preset 1 Bruck's
                    "3": alg("Pairwise"),  # preset 3 pairwise exchange
                    "5": alg("Pairwise")}[first]  # preset 4 Plum's: not public, pairwise
    if coll == 6:  # barrier
        if comp.startswith("6,"):
            return shm(comp[2:])  # presets 7-9 SHM-based flat, knomial, knary
        if comp == "1":
            return alg("Ch4Alpha")  # topology-aware
    if coll == 7:  # bcast
        if comp == "1" and len(args) > 1 and args[1].split(",")[0] == "11":
            return shm(args[1][3:])  # presets 9-11: topology-aware SHM-based flat, knomial, knary
        if comp == "1":
            return alg("Ch4Alpha")  # presets 4-6: topology-aware, node leaders first; -1: the shm table (not translated)
        if comp == "2":
            return alg("Ch4Beta")  # the root's node first
        if comp == "4":
            return MPIR  # composition 4: no preset names it; not modelled
    if coll == 9 or coll == 14:  # gather, scatter
        if comp in ("1", "3") and first in ("1", "2", "3"):
            # 1 binomial; 3 1: preset 2 topology-aware binomial; 1 2: preset 3
            # Shumilin's; 1 3,x: preset 4 (segmented / radix x): all binomial here
            return alg("BinomialTree")
    if coll == 12:  # reduce
        if comp == "1" and len(args) > 1 and args[1].split(",")[0] == "7":
            return shm(args[1][2:])  # presets 8-11: topology-aware SHM-based flat, knomial, knary
        if comp == "1":
            return alg("Ch4Alpha")  # presets 3, 4, 6, 12: topology-aware; -1: the shm table (not translated)
        if comp == "3":
            return MPIR
    raise KeyError("no mapping for coll %d leaf %r" % (coll, leaf))


def net_map(coll, leaf):
    """The Pick of one netmod-level leaf: its algorithm id and parameters.
    The ids were told apart by the bytes each rank sends on 8 ranks
    (docs/sources/intelmpi-tuning.md section 4b)."""
    vals = [int(v) for v in leaf.split(",")]
    a = vals[0]
    par = vals[1:] + [0, 0, 0, 0]
    if coll == 2:  # allreduce
        if a in (3, 7):
            return alg("RecursiveDoubling")  # full vector, log2 p steps
        if a in (14, 15):
            return alg("RecursiveDoubling")  # radix-k exchange: recursive doubling for k = 2, substitute above
        if a in (4, 12):
            return alg("Rabenseifner")  # 2n(p-1)/p per rank
        if a in (8, 11, 13):
            return alg("Ring")  # ring traffic (13: substitute)
        if a == 10:
            return alg("Ring")  # Shumilin's ring: a pipelined chain reduce + bcast; substitute
        return MPIR  # 1 (knomial) and others: not identified
    if coll == 7:  # bcast
        if a == 3:
            return alg("BinomialTree")
        if a == 4:
            return alg("ScatterRecursiveDoublingAllgather")
        if a == 5:
            return alg("ScatterRingAllgather")
        if a == 10:
            return "Pick::Alg(A::Pipeline(%d))" % par[0]  # Shumilin's: a pipelined chain
        if a == 2:
            # k-ary tree in segments; k = 2 is Open MPI's binary tree shape,
            # a larger k is not modelled (binary tree, substitute)
            return "Pick::Alg(A::BinaryTree(%d))" % par[1]
        if a in (1, 6):
            return alg("Knomial")  # k-nomial trees (segmented): Open MPI's radix-4 knomial, substitute
        return MPIR
    if coll == 12:  # reduce
        if a == 3:
            return alg("BinomialTree")
        if a == 4:
            return alg("Rabenseifner")
        if a == 6:
            return "Pick::Alg(A::Pipeline(%d))" % par[0]  # Shumilin's: a chain (measured)
        if a == 2:
            return "Pick::Alg(A::BinaryTree(%d))" % par[1]  # k-ary tree in segments (k = 2 measured binary); substitute for k > 2
        if a in (1, 5):
            return alg("BinomialTree")  # 5: binomial (measured); 1: k-nomial, binomial for k = 2, substitute above
        return MPIR
    raise KeyError("no netmod mapping for coll %d" % coll)


NET_COLLS = {2: "NET_ALLREDUCE", 7: "NET_BCAST", 12: "NET_REDUCE"}


def key(v, top):
    return top if v in (-1, 2147483647) else str(v)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    path = pathlib.Path(sys.argv[1])
    raw = path.read_bytes()
    data = impi_tuning.load(path)
    def order(v):
        return 1 << 62 if v in (-1, 2147483647) else v

    def build(rows_in, mapper):
        out = {}
        for coll, ppn, np_, msg, entries in sorted(rows_in, key=lambda r: (r[0], order(r[1]), order(r[2]), order(r[3]))):
            leaf = " ".join(impi_tuning.strip(e) for e in entries)
            pick = mapper(coll, leaf)
            rows = out.setdefault(coll, {}).setdefault(ppn, {}).setdefault(np_, [])
            bound = key(msg, "u64::MAX")
            if rows and rows[-1][1] == pick:
                rows[-1] = (bound, pick)
            else:
                rows.append((bound, pick))
        return out

    tables = build([r for r in impi_tuning.ch4_rows(data) if r[0] in COLLS], leaf_map)
    net = build([r for r in impi_tuning.net_rows(data) if r[0] in NET_COLLS], net_map)
    out = []
    out.append("// @generated by scripts/intelmpi/gen_table.py from %s" % path.name)
    out.append("// (md5 %s, %d bytes) | rustfmt: do not edit; see" % (hashlib.md5(raw).hexdigest(), len(raw)))
    out.append("// docs/sources/intelmpi-tuning.md.")
    out.append("")
    out.append("use super::super::Algorithm as A;")
    out.append("use super::super::{ShmTree, ShmTrees, TreeKind};")
    out.append("use super::{Comm, Pick, Ppn};")
    emit = [(tables, c, n, "composition") for c, n in COLLS.items()]
    emit += [(net, c, n, "netmod") for c, n in NET_COLLS.items()]
    for source, coll, name, level in emit:
        out.append("")
        out.append("/// `%s` (%s level): ppn rows, comm_size rows, (msg_size bound, pick)."
                   % (COLLS[coll].lower(), level))
        out.append("pub(super) static %s: &[Ppn] = &[" % name)
        for ppn, comms in source[coll].items():
            out.append("    Ppn {")
            out.append("        ppn: %s," % key(ppn, "u32::MAX"))
            out.append("        comms: &[")
            for np_, rows in comms.items():
                out.append("            Comm {")
                out.append("                np: %s," % key(np_, "u32::MAX"))
                out.append("                sizes: &[")
                for bound, pick in rows:
                    out.append("                    (%s, %s)," % (bound, pick))
                out.append("                ],")
                out.append("            },")
            out.append("        ],")
            out.append("    },")
        out.append("];")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
