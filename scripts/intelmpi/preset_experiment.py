#!/usr/bin/env python3
"""Which composition-level leaf each I_MPI_ADJUST_<COLL> preset id is.

Usage: scripts/intelmpi/preset_experiment.py IMPI_ROOT [OUT.tsv]

IMPI_ROOT is an installed Intel MPI runtime (e.g. a venv with
`pip install impi-rt==2021.13.1`: its bin/ has mpiexec and IMB-MPI1). The
script writes a JSON tuning (the documented mpitune format,
`{"coll=Reduce": {"ppn=3": {"comm_size=3": {"comm_id=-1": {"msg_size=k":
{"REDUCE=k": {}}}}}}}`) that gives preset k to message size k for k = 1..40
and every blocking collective, runs IMB-MPI1 Barrier on 2 ranks with
I_MPI_TUNING pointing at it and I_MPI_TUNING_BIN_DUMP at a file, decodes the
dumped binary tree (impi_tuning.py) and prints, per collective and preset,
the leaf the library stored under ppn=3, comm_size=3 (a leaf of -1 entries
only: the library does not know the preset).
"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import impi_tuning  # noqa: E402

COLLS = ["Allgather", "Allgatherv", "Allreduce", "Alltoall", "Alltoallv", "Alltoallw", "Barrier",
         "Bcast", "Exscan", "Gather", "Gatherv", "Reduce_scatter", "Reduce", "Scan", "Scatter",
         "Scatterv", "Reduce_scatter_block"]
PRESETS = 40
MARK = 3  # the ppn and comm_size the presets are stored under


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(sys.argv[1]).resolve()
    out = open(sys.argv[2], "w") if len(sys.argv) > 2 else sys.stdout
    tree = {}
    for c in COLLS:
        sizes = {"msg_size=%d" % k: {"%s=%d" % (c.upper(), k): {}} for k in range(1, PRESETS + 1)}
        sizes["msg_size=-1"] = {"%s=1" % c.upper(): {}}
        tree["coll=%s" % c] = {"ppn=%d" % MARK: {"comm_size=%d" % MARK: {"comm_id=-1": sizes}}}
    with tempfile.TemporaryDirectory() as tmp:
        js = pathlib.Path(tmp) / "presets.json"
        dump = pathlib.Path(tmp) / "presets.dat"
        js.write_text(json.dumps(tree))
        env = dict(os.environ)
        env.update({
            "I_MPI_ROOT": str(root),
            "PATH": "%s/bin:%s" % (root, env.get("PATH", "")),
            "LD_LIBRARY_PATH": "%s/lib:%s/lib/libfabric" % (root, root),
            "FI_PROVIDER_PATH": "%s/lib/libfabric/prov" % root,
            "I_MPI_TUNING": str(js),
            "I_MPI_TUNING_BIN_DUMP": str(dump),
        })
        subprocess.run(["mpiexec", "-n", "2", "IMB-MPI1", "Barrier", "-iter", "5"], env=env,
                       check=True, stdout=subprocess.DEVNULL, timeout=300)
        data = impi_tuning.load(dump)
    print("coll\tpreset\tleaf", file=out)
    for coll, ppn, np_, msg, entries in impi_tuning.ch4_rows(data):
        if ppn == MARK and np_ == MARK and msg > 0 and entries and entries[0][0] != -1:
            print("%d\t%d\t%s" % (coll, msg, " ".join(impi_tuning.strip(e) for e in entries)), file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
