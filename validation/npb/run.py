#!/usr/bin/env python3
"""NPB skeletons against real NPB 3.3 MPI runs on this machine.

Protocol (VALIDATION.md section 6), for a machine whose speed drifts by
10-40% over minutes:
- Everything of one round is measured interleaved: for each repetition,
  for each benchmark and class, the 1-rank run, two 1-rank runs at once
  (both cores busy, as in a 2-rank run) and the 2-rank run, one after the
  other. Calibration and the runs it predicts are thus measured within
  seconds of each other.
- Calibration: one coefficient per benchmark and class, the skeleton's
  `op_time` (seconds per counted operation), chosen so that the skeleton's
  1-rank prediction equals the measured median of the 1-rank run alone
  (op_time_1), and of the two concurrent 1-rank runs (op_time_2: the
  speed of a core while the other core runs the same program). The
  prediction is affine in op_time, so two simulations give it exactly.
- Predictions: the 2-rank run with op_time_c = op_time_1 x k, where k is
  the core factor of the round: the median, over the classes, of EP's
  time beside another over its time alone. Why: two concurrent 1-rank
  runs slow each other in two ways, and only one of them applies to a
  2-rank run. What slows a core whenever both cores work (a shared
  physical core, the clock, the hypervisor) applies to it, and EP, which
  keeps its data in the core's own caches and sends almost nothing,
  measures exactly that. What slows two copies of a program that each
  hold the whole working set (the shared last-level cache and memory
  bandwidth, loaded twice over) does not: the 2-rank run splits one
  working set over the two ranks, so the node holds what the 1-rank run
  alone held. op_time_2's prediction is shown beside it for comparison
  (VALIDATION.md 7.4: MG W is 14-17% slower beside another than alone,
  EP within 1%, and the 2-rank MG W runs at the alone speed).
  CG with --bind and --cg-kernel: its own factor k_CG instead, the column
  halves its two ranks hold timed on both cores at once (CPU 0 and CPU
  1), the slower core's time over the faster's: CG's matrix
  product streams its matrix from the shared cache, where this VM's two
  vCPUs differ when both work (VALIDATION.md 3.0e, 7.7), and the ranks
  meet at every reduction, so the slower core sets the pace.
  The machine: validation/dev-machine/imb-real/machine-fast.toml unless
  --machine names others (MPICH 4's shared memory, calibrated by
  `calibrate net --run`). The 1-rank runs are the calibration and are not
  counted as predictions.
- Each measured median comes with a distribution-free confidence interval
  (order statistics, at least 90%); an error is reported with it.
- The time compared is the benchmark's own ("Time in seconds", its timed
  region; the skeletons print the same region's time).
Writes OUT/round-R.csv (every measurement) and OUT/summary.md.
With --measured DIR nothing is run: the rounds' runs are read from
DIR/round-R.csv (an earlier --out) and predicted on the machines given,
to compare machines on the same measurements (VALIDATION.md 7.5).
"""
import argparse
import csv
import math
import os
import re
import statistics
import subprocess
import sys
import time

BENCHES = ["cg", "ep", "ft", "is", "lu", "mg"]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MACHINE = os.path.join(ROOT, "validation/dev-machine/imb-real/machine-fast.toml")
TIME_RE = re.compile(r"Time in seconds =\s*([0-9.eE+-]+)")


def real_time(out, what):
    m = TIME_RE.search(out)
    if not m:
        sys.exit(f"{what}: no 'Time in seconds' in its output:\n{out}")
    return float(m.group(1))


# `--bind` (run.sh's BIND=yes, the default): every real run bound as
# `calibrate blocks --pin` binds its copies (VALIDATION.md 3.0e): rank j
# on CPU j (`-bind-to core`), the two runs of a pair on CPUs 0 and 1, the
# CG kernel on CPU 0 (where the 1-rank runs are). Empty: unbound.
BIND = []


def run_real(bindir, bench, cls, procs):
    exe = os.path.join(bindir, f"{bench}.{cls}.{procs}")
    bind = ["-bind-to", "core"] if BIND else []
    p = subprocess.run(["mpiexec", *bind, "-n", str(procs), exe], cwd=bindir,
                       capture_output=True, text=True)
    if p.returncode != 0 or "SUCCESSFUL" not in p.stdout:
        sys.exit(f"{exe} failed or did not verify:\n{p.stdout}\n{p.stderr}")
    return real_time(p.stdout, exe)


def run_pair(bindir, bench, cls):
    """Two 1-rank runs at once; both times."""
    exe = os.path.join(bindir, f"{bench}.{cls}.1")
    ps = [subprocess.Popen(["mpiexec", *(["-bind-to", f"user:{i}"] if BIND else []), "-n", "1", exe],
                           cwd=bindir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
          for i in range(2)]
    times = []
    for p in ps:
        out, err = p.communicate()
        if p.returncode != 0 or "SUCCESSFUL" not in out:
            sys.exit(f"{exe} (pair) failed:\n{out}\n{err}")
        times.append(real_time(out, exe))
    return times


def simulate(parsim, bench, cls, procs, op_time, machine=MACHINE, params=()):
    cmd = [parsim, "run", os.path.join(ROOT, f"examples/npb/{bench}.mpl"), "-n", str(procs),
           "--machine", machine, "--param", f"class={cls}", "--param", f"op_time={op_time!r}", "-q"]
    for p in params:
        cmd += ["--param", p]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stdout}\n{p.stderr}")
    return real_time(p.stdout, " ".join(cmd))


def fit_op_time(parsim, bench, cls, measured, machine=MACHINE, params=()):
    """op_time at which the 1-rank prediction is `measured` (the prediction
    is affine in op_time: two simulations give the line)."""
    a, b = 1e-9, 2e-9
    ta = simulate(parsim, bench, cls, 1, a, machine, params)
    tb = simulate(parsim, bench, cls, 1, b, machine, params)
    slope = (tb - ta) / (b - a)
    return a + (measured - ta) / slope


MATVEC_RE = re.compile(r"matvec (\d+) rows (\d+) columns (\d+) nonzeros")
PAIR_RE = re.compile(r"matvec on both cores, core (\d) (\d+) rows (\d+) columns (\d+) nonzeros")


def cg_kernel_command(kernel, cls):
    """validation/npb/cgmv.f on the class's real one-rank block and its two
    column halves."""
    reps = {"S": 2000, "W": 200}.get(cls, 20)
    return [os.path.join(kernel, "cgmv"), os.path.join(kernel, f"cgblock.{cls}"), "2", str(reps)]


def cg_kernel_blocks(cmd, out, err, returncode):
    """One run's three blocks, (rows, columns, nonzeros, seconds per
    call); a failed run or another count of blocks stops the protocol."""
    if returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out}\n{err}")
    blocks = [tuple(int(x) for x in line.split()[:3]) + (float(line.split()[3]),)
              for line in out.splitlines() if line.strip()]
    if len(blocks) != 3:
        sys.exit(f"{' '.join(cmd)}: expected 3 blocks, got:\n{out}")
    return blocks


def run_cg_kernel(kernel, cls):
    """CG's matrix product on the class's real one-rank block and its two
    column halves, each alone on one core (validation/npb/cgmv.f): a list
    of (rows, columns, nonzeros, seconds per call)."""
    cmd = cg_kernel_command(kernel, cls)
    if BIND:
        cmd = ["taskset", "-c", "0", *cmd]
    p = subprocess.run(cmd, capture_output=True, text=True)
    return cg_kernel_blocks(cmd, p.stdout, p.stderr, p.returncode)


def run_cg_kernel_pair(kernel, cls):
    """The same kernel on CPU 0 and CPU 1 at once (each the whole block
    and its column halves, as run_cg_kernel): the two ranks of a bound
    2-rank CG run compute their halves at the same time, each on its core,
    and the slower sets the pace at every reduction (VALIDATION.md 7.7).
    Per core, its list of (rows, columns, nonzeros, seconds)."""
    cmds = [["taskset", "-c", str(i), *cg_kernel_command(kernel, cls)] for i in range(2)]
    ps = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
          for cmd in cmds]
    return [cg_kernel_blocks(cmd, *p.communicate(), p.returncode) for cmd, p in zip(cmds, ps)]


def cg_core_factor(cores):
    """CG's 2-rank factor: the slower core's time for a column half while
    both cores run theirs, over the faster core's. A ratio of two times
    taken at the same moment: the first form of this factor divided by a
    half's time alone on CPU 0, measured a few seconds apart, and this
    VM's drift between the two made it swing from 0.92 to 1.38 while the
    pair's two cores stood 17-35% apart in every round (VALIDATION.md
    7.7). It takes the faster core beside the other as fast as alone (181
    against 177 us in the one round where both were measured in one
    state)."""
    per_core = [statistics.mean(b[3] for b in blocks[1:]) for blocks in cores]
    return max(per_core) / min(per_core)


def row_ops(blocks):
    """The matrix product's per-row cost in the skeleton's operations
    (examples/npb/cg.mpl: 2 per nonzero): t = c_nnz * nonzeros + c_row *
    rows through the whole block and the mean of its column halves (every
    row, about half the nonzeros), row_ops = 2 c_row / c_nnz; 0 when the
    two do not give positive costs."""
    rows, _, nnz, t = blocks[0]
    halves = blocks[1:]
    nnz_h = statistics.mean(b[2] for b in halves)
    t_h = statistics.mean(b[3] for b in halves)
    c_nnz = (t - t_h) / (nnz - nnz_h)
    c_row = (t - c_nnz * nnz) / rows
    if c_nnz <= 0 or c_row <= 0:
        return 0.0
    return 2.0 * c_row / c_nnz


def median_ci(xs, level=0.90):
    """Median and a distribution-free confidence interval for it: the
    narrowest symmetric pair of order statistics (j, n+1-j) whose coverage
    1 - 2 P(Bin(n, 1/2) < j) is at least `level`."""
    xs = sorted(xs)
    n = len(xs)
    med = statistics.median(xs)
    best = (xs[0], xs[-1])
    for j in range(1, n // 2 + 1):
        below = sum(math.comb(n, i) for i in range(j)) / 2 ** n
        if 1 - 2 * below >= level:
            best = (xs[j - 1], xs[n - j])
    return med, best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", help="the NPB binaries (needed unless --measured)")
    ap.add_argument("--parsim", required=True)
    ap.add_argument("--classes", nargs="+", default=["S", "W"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=int(os.environ.get("ROUNDS", 3)))
    ap.add_argument("--repeat", type=int, default=int(os.environ.get("REPEAT", 5)))
    ap.add_argument("--machine", action="append",
                    help="predict on this machine file (repeatable; default: "
                         "validation/dev-machine/imb-real/machine-fast.toml); "
                         "each gets its own op_time, prediction and error columns")
    ap.add_argument("--cg-kernel", metavar="DIR",
                    help="time CG's matrix product on the real matrix in every round "
                         "(DIR/cgmv and DIR/cgblock.CLASS, as run.sh builds them) and "
                         "predict CG with its per-row cost (the skeleton's row_ops)")
    ap.add_argument("--measured", metavar="DIR",
                    help="predict the real runs saved in DIR/round-R.csv (an earlier --out) "
                         "instead of measuring them: the same rounds on other machine files")
    ap.add_argument("--bind", action="store_true",
                    help="bind every real run to cores (rank j on CPU j; the pair's runs on CPUs 0 "
                         "and 1; the CG kernel on CPU 0)")
    args = ap.parse_args()
    if args.bind:
        BIND.append(True)
    if not args.bin and not args.measured:
        ap.error("--bin is needed to measure (or --measured to predict saved runs)")
    machines = args.machine or [MACHINE]
    os.makedirs(args.out, exist_ok=True)
    cases = [(b, c) for c in args.classes for b in BENCHES]
    summary = ["# NPB 3.3 MPI on this machine: skeleton predictions against real runs", "",
               f"`bash validation/npb/run.sh NPB3.3-MPI-DIR` ({args.rounds} rounds of "
               f"{args.repeat} interleaved repetitions; validation/npb/run.py says how).", ""]
    for rnd in range(1, args.rounds + 1):
        alone = {k: [] for k in cases}
        pair = {k: [] for k in cases}
        two = {k: [] for k in cases}
        # CG's matrix product per class: (rows, columns, nonzeros, s) of
        # the one-rank block and its column halves.
        matvec = {}
        # With --bind: the same on both cores at once, per class, per core.
        matvec_pair = {}
        started = time.time()
        if args.measured:
            runs = {"1 rank alone": alone, "1 rank beside another": pair, "2 ranks": two}
            with open(os.path.join(args.measured, f"round-{rnd}.csv")) as saved:
                for row in csv.DictReader(saved):
                    key = (row["benchmark"], row["class"])
                    m = MATVEC_RE.fullmatch(row["run"])
                    mp = PAIR_RE.fullmatch(row["run"])
                    if mp:
                        core = int(mp.group(1))
                        cores = matvec_pair.setdefault(row["class"], [[], []])
                        cores[core].append(tuple(int(x) for x in mp.groups()[1:]) + (float(row["seconds"]),))
                    elif m:
                        matvec.setdefault(row["class"], []).append(
                            tuple(int(x) for x in m.groups()) + (float(row["seconds"]),))
                    elif key in alone:
                        runs[row["run"]][key].append(float(row["seconds"]))
            missing = [f"{b} {c}" for (b, c) in cases if not alone[(b, c)] or not two[(b, c)]]
            if missing:
                sys.exit(f"{args.measured}/round-{rnd}.csv has no runs of " + ", ".join(missing))
        else:
            with open(os.path.join(args.out, f"round-{rnd}.csv"), "w") as raw:
                raw.write("repetition,benchmark,class,run,seconds\n")
                if args.cg_kernel:
                    for c in args.classes:
                        matvec[c] = run_cg_kernel(args.cg_kernel, c)
                        for (r, n, z, t) in matvec[c]:
                            raw.write(f"0,cg,{c},matvec {r} rows {n} columns {z} nonzeros,{t}\n")
                        if BIND:
                            matvec_pair[c] = run_cg_kernel_pair(args.cg_kernel, c)
                            for core, blocks in enumerate(matvec_pair[c]):
                                for (r, n, z, t) in blocks:
                                    raw.write(f"0,cg,{c},matvec on both cores, core {core} {r} rows "
                                              f"{n} columns {z} nonzeros,{t}\n")
                for rep in range(1, args.repeat + 1):
                    for (b, c) in cases:
                        t = run_real(args.bin, b, c, 1)
                        alone[(b, c)].append(t)
                        raw.write(f"{rep},{b},{c},1 rank alone,{t}\n")
                        for t in run_pair(args.bin, b, c):
                            pair[(b, c)].append(t)
                            raw.write(f"{rep},{b},{c},1 rank beside another,{t}\n")
                        t = run_real(args.bin, b, c, 2)
                        two[(b, c)].append(t)
                        raw.write(f"{rep},{b},{c},2 ranks,{t}\n")
                    print(f"round {rnd}: repetition {rep} of {args.repeat} done "
                          f"({time.time() - started:.0f} s)", file=sys.stderr)
        names = [os.path.basename(m) for m in machines]
        summary += [f"## Round {rnd}", ""]
        if len(machines) > 1:
            summary += ["Machines: " + ", ".join(f"`{os.path.relpath(m, ROOT)}`" for m in machines), ""]
        # The core factor k (see the module's docstring): EP beside another
        # over EP alone, median over the classes of the round.
        ks = [statistics.median(pair[("ep", c)]) / statistics.median(alone[("ep", c)])
              for c in args.classes if ("ep", c) in alone]
        k = statistics.median(ks) if ks else 1.0
        summary += [f"Core factor k = {k:.4f} (EP beside another / alone: "
                    + ", ".join(f"{x:.4f}" for x in ks) + ").", ""]
        # CG's per-row cost of its matrix product, per class.
        cg_params = {}
        k_cg = {}
        for c, blocks in sorted(matvec.items()):
            ops = row_ops(blocks)
            cg_params[c] = [f"row_ops={ops!r}"]
            summary += [f"CG {c} matrix product alone on one core (validation/npb/cgmv.f): "
                        + ", ".join(f"{n} columns {z} nonzeros {t * 1e6:.2f} us" for (_, n, z, t) in blocks)
                        + f"; row_ops = {ops:.1f}", ""]
            if c in matvec_pair:
                k_cg[c] = cg_core_factor(matvec_pair[c])
                summary += [f"CG {c} column halves on both cores at once: "
                            + ", ".join(f"core {i} " + " / ".join(f"{b[3] * 1e6:.2f} us" for b in cb[1:])
                                        for i, cb in enumerate(matvec_pair[c]))
                            + f"; CG's core factor k_CG = {k_cg[c]:.4f} (the slower core's half "
                            "over the faster's), used for CG's 2-rank op_time_c instead of k", ""]
        summary += ["| benchmark | class | 1 rank measured (s) | op_time_1 (ns) | beside another (s) | "
                    "2 ranks measured (s) [90% CI] | "
                    + " | ".join(f"op_time_c, predicted (s), error: {n} | beside: op_time_2, error" for n in names) + " |",
                    "| --- | --- | --- | --- | --- | --- | " + " | ".join("--- | ---" for _ in names) + " |"]
        errors = {m: [] for m in machines}
        errors_beside = {m: [] for m in machines}
        for (b, c) in cases:
            m1, _ = median_ci(alone[(b, c)])
            mp, _ = median_ci(pair[(b, c)])
            m2, (lo, hi) = median_ci(two[(b, c)])
            # op_time_1 on each machine (the table shows the first's).
            extra = cg_params.get(c, []) if b == "cg" else []
            op1s = [fit_op_time(args.parsim, b, c, m1, m, extra) for m in machines]
            op1 = op1s[0]
            cells = []
            for m, op1_m in zip(machines, op1s):
                opc = op1_m * (k_cg.get(c, k) if b == "cg" else k)
                pred = simulate(args.parsim, b, c, 2, opc, m, extra)
                err = (pred - m2) / m2
                errors[m].append(abs(err))
                op2 = fit_op_time(args.parsim, b, c, mp, m, extra)
                pred2 = simulate(args.parsim, b, c, 2, op2, m, extra)
                err2 = (pred2 - m2) / m2
                errors_beside[m].append(abs(err2))
                cells.append(f"{opc * 1e9:.3f} ns, {pred:.6f}, {err:+.1%} | {op2 * 1e9:.3f} ns, {err2:+.1%}")
            summary.append(
                f"| {b.upper()} | {c} | {m1:.6f} | {op1 * 1e9:.3f} | {mp:.6f} | "
                f"{m2:.6f} [{(lo - m2) / m2:+.1%}, {(hi - m2) / m2:+.1%}] | " + " | ".join(cells) + " |")
        summary.append("")
        for m, n in zip(machines, names):
            summary.append(f"Median |error| of the 2-rank predictions on {n}: "
                           f"{statistics.median(errors[m]):.1%}, max {max(errors[m]):.1%} "
                           f"(op_time_2 beside another: {statistics.median(errors_beside[m]):.1%}, "
                           f"max {max(errors_beside[m]):.1%}; round {rnd}, "
                           f"{time.time() - started:.0f} s).")
        summary.append("")
        print("\n".join(summary[-(len(cases) + 6 + len(machines)):]))
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write("\n".join(summary) + "\n")


if __name__ == "__main__":
    main()
