//! The NAS Parallel Benchmark skeletons (`examples/npb/`) communicate as
//! the real benchmarks do: per rank, every communication call with its
//! operation, peer, bytes and communicator size, counted in a simulation
//! (`parsim run --call-profile`) and in real runs of NPB 3.3 MPI class S
//! on 1, 2, 4, 8 and 16 ranks, BT and SP on 1, 4, 9 and 16 (CG's 2-D
//! grids, MG's empty coarse levels, LU's 2-D wavefront, BT's and SP's
//! multipartition sweeps; `validation/npb/profiles/`, counted by the PMPI
//! wrapper `validation/npb/mpicount.c` through `validation/npb/profile.sh`;
//! the real files also name the source line of each call). Call sites are
//! compared by what they do, since a skeleton's lines are not the
//! source's; a difference is listed call by call.
//!
//! And each skeleton refuses the process counts its benchmark refuses.

mod support;

use std::collections::BTreeMap;
use std::path::Path;

/// The benchmarks with skeletons, as NPB names their programs, and the
/// process counts of the real runs each is compared with (BT and SP run on
/// square counts only).
const BENCHMARKS: [(&str, &[u32]); 8] = [
    ("bt", &[1, 4, 9, 16]),
    ("cg", &[1, 2, 4, 8, 16]),
    ("ep", &[1, 2, 4, 8, 16]),
    ("ft", &[1, 2, 4, 8, 16]),
    ("is", &[1, 2, 4, 8, 16]),
    ("lu", &[1, 2, 4, 8, 16]),
    ("mg", &[1, 2, 4, 8, 16]),
    ("sp", &[1, 4, 9, 16]),
];

/// (rank, operation, peer, bytes, communicator size) -> calls.
type Profile = BTreeMap<(u32, String, i64, u64, u32), u64>;

/// A call profile in the CSV columns both sides write (`#` lines are
/// comments): rank,site,operation,peer,bytes,comm_size,calls.
fn read_profile(text: &str, what: &str) -> Profile {
    let mut p = Profile::new();
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    assert_eq!(
        lines.next(),
        Some("rank,site,operation,peer,bytes,comm_size,calls"),
        "{what}: header"
    );
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 7, "{what}: {line}");
        let num = |i: usize| -> i64 {
            f[i].parse()
                .unwrap_or_else(|_| panic!("{what}: field {i} of {line}"))
        };
        let key = (
            num(0) as u32,
            f[2].to_owned(),
            num(3),
            num(4) as u64,
            num(5) as u32,
        );
        *p.entry(key).or_default() += num(6) as u64;
    }
    p
}

fn differences(real: &Profile, sim: &Profile) -> Vec<String> {
    let mut keys: Vec<_> = real.keys().chain(sim.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|k| {
            let (r, s) = (
                real.get(k).copied().unwrap_or(0),
                sim.get(k).copied().unwrap_or(0),
            );
            (r != s).then(|| {
                format!(
                    "rank {} {} peer {} bytes {} comm size {}: real {r}, skeleton {s}",
                    k.0, k.1, k.2, k.3, k.4
                )
            })
        })
        .collect()
}

#[test]
fn skeletons_make_the_real_benchmarks_calls() {
    let dir = support::temp_dir();
    let mut failures = Vec::new();
    let mut compared = 0;
    for (bench, counts) in BENCHMARKS {
        for &procs in counts {
            let real_file = Path::new(support::ROOT)
                .join(format!("validation/npb/profiles/{bench}.S.{procs}.csv"));
            let real_text = std::fs::read_to_string(&real_file)
                .unwrap_or_else(|e| panic!("{}: {e}", real_file.display()));
            let real = read_profile(&real_text, &real_file.display().to_string());
            let out = dir.join(format!("{bench}.{procs}.csv"));
            let out_s = out.display().to_string();
            let skeleton = format!("examples/npb/{bench}.mpl");
            let n = procs.to_string();
            let o = support::parsim(&[
                "run",
                &skeleton,
                "-n",
                &n,
                "--param",
                "class=S",
                "-q",
                "--call-profile",
                &out_s,
            ]);
            assert!(
                o.status.success(),
                "{skeleton} on {procs}: {}",
                support::stderr(&o)
            );
            let sim_text = std::fs::read_to_string(&out).expect("the call profile was written");
            let sim = read_profile(&sim_text, &out_s);
            // Every skeleton call names the skeleton's file and line.
            assert!(
                sim_text.lines().skip(1).all(|l| l
                    .split(',')
                    .nth(1)
                    .is_some_and(|s| s.starts_with(&format!("{bench}.mpl:")))),
                "{sim_text}"
            );
            let diff = differences(&real, &sim);
            if !diff.is_empty() {
                failures.push(format!(
                    "{bench} class S on {procs} ranks:\n  {}",
                    diff.join("\n  ")
                ));
            }
            compared += real.values().sum::<u64>();
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(compared > 10_000, "{compared} calls compared");
}

/// The process counts each benchmark refuses (setparams.c's check_info and
/// the programs' own checks) stop the run at once, with the reason.
#[test]
fn skeletons_refuse_the_process_counts_their_benchmarks_refuse() {
    for (bench, ranks, class, says) in [
        ("cg", "3", "S", "power of two"),
        ("ft", "6", "S", "power of two"),
        ("is", "12", "S", "power of two"),
        ("is", "256", "S", "at most 128"),
        ("mg", "5", "S", "power of two"),
        ("ep", "300", "S", "too many ranks"),
        ("bt", "8", "S", "square"),
        ("sp", "12", "S", "square"),
    ] {
        let skeleton = format!("examples/npb/{bench}.mpl");
        let o = support::parsim(&[
            "run",
            &skeleton,
            "-n",
            ranks,
            "--param",
            &format!("class={class}"),
            "-q",
        ]);
        assert_eq!(
            o.status.code(),
            Some(4),
            "{bench} on {ranks}: {}",
            support::stderr(&o)
        );
        let err = support::stderr(&o);
        assert!(
            err.contains("abort: ") && err.contains(says),
            "{bench} on {ranks}: {err}"
        );
    }
}

/// CG's matrix product costs `row_ops` operations per row of the rank's
/// block on top of its 2 per nonzero (examples/npb/cg.mpl, VALIDATION.md
/// 7.6): at 1 and at 2 ranks of class S every rank holds all 1,400 rows,
/// and the run makes (niter + 1) x (cgitmax + 1) = 16 x 26 = 416 products
/// (the untimed warm-up's conj_grad and the timed ones), so each rank
/// computes 416 x 1,400 x row_ops x op_time longer.
#[test]
fn cg_charges_its_matrix_product_per_row_too() {
    let compute = |ranks: &str, row_ops: &str| -> Vec<f64> {
        let o = support::parsim(&[
            "run",
            "examples/npb/cg.mpl",
            "-n",
            ranks,
            "--param",
            "class=S",
            "--param",
            "op_time=1e-9",
            "--param",
            &format!("row_ops={row_ops}"),
            "--format",
            "json",
        ]);
        assert!(o.status.success(), "{}", support::stderr(&o));
        let report: serde_json::Value =
            serde_json::from_str(&support::stdout(&o)).expect("a JSON report");
        report["ranks"]
            .as_array()
            .expect("per-rank figures")
            .iter()
            .map(|r| r["compute_seconds"].as_f64().expect("compute seconds"))
            .collect()
    };
    for ranks in ["1", "2"] {
        let without = compute(ranks, "0");
        let with = compute(ranks, "10");
        assert_eq!(without.len(), with.len());
        for (a, b) in without.iter().zip(&with) {
            approx::assert_relative_eq!(b - a, 416.0 * 1400.0 * 10.0 * 1e-9, max_relative = 1e-9);
        }
    }
}
