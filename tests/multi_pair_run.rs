//! `calibrate net --multi-pair-run` / `--shm-multi-pair-run`: parsim's
//! benchmark measures k pairs streaming at once (osu_mbw_mr's loop) with the
//! user's launcher, keeps the output next to the machine file and fits it
//! as it fits a given osu_mbw_mr table. Needs MPICH (`mpicc`, `mpirun`);
//! skipped without it unless CI=true or PARSIM_REQUIRE_MPI is set.

mod support;

use support::{parsim, text};

const NETWORK: &str = "validation/dev-machine/dev-machine.network.netbench.txt";
const SHM: &str = "validation/dev-machine/dev-machine.shm.netbench.txt";

#[test]
fn multi_pair_runs_are_measured_saved_and_fitted() {
    if !support::requires_tools(&["mpicc", "mpirun"], "PARSIM_REQUIRE_MPI") {
        return;
    }
    let dir = support::temp_dir();
    let machine = dir.join("m.toml");
    let machine = machine.to_str().expect("utf-8 path");
    let o = parsim(&[
        "calibrate",
        "net",
        NETWORK,
        "--format",
        "imb",
        "--shm",
        SHM,
        "--shm-format",
        "imb",
        "--ranks-per-node",
        "2",
        "--multi-pair-run",
        "mpirun -np 2",
        "--shm-multi-pair-run",
        "mpirun -np 2",
        "-o",
        machine,
        "-q",
    ]);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{out}\n{err}");
    for level in ["network", "shm"] {
        let saved = dir.join(format!("m.{level}-multi-pair-1.netbench.txt"));
        let table = std::fs::read_to_string(&saved).expect("the output is kept");
        assert!(
            table.contains("# [ pairs: 1 ] [ window size: 64 ]"),
            "{table}"
        );
        let rows: Vec<(u64, f64)> = table
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let mut w = l.split_whitespace();
                Some((w.next()?.parse().ok()?, w.next()?.parse().ok()?))
            })
            .collect();
        assert_eq!(rows.len(), 23, "sizes 1 B to 4 MiB: {table}");
        assert!(rows.iter().all(|&(_, mbs)| mbs > 0.0), "{table}");
        assert!(
            out.contains(&format!("{}", saved.display())),
            "the report names {}:\n{out}",
            saved.display()
        );
    }
    assert!(out.contains("osu_mbw_mr, 1 pairs inside one node"), "{out}");
    assert!(
        err.contains("measured 1 pair(s) streaming at once (shm)"),
        "{err}"
    );
    let o = parsim(&["machine", machine]);
    assert!(o.status.success(), "{}", text(&o.stderr));
}

#[test]
fn a_shared_memory_multi_pair_run_needs_the_channel() {
    let o = parsim(&[
        "calibrate",
        "net",
        NETWORK,
        "--shm-multi-pair-run",
        "mpirun -np 2",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty());
    assert!(
        text(&o.stderr).contains("--shm-multi-pair-run needs the shared-memory channel"),
        "{}",
        text(&o.stderr)
    );
}
