//! `parsim validate --table` with IMB-MPI1 / PMB text output as the
//! benchmarks print it: benchmark and process-count blocks, "k active of N"
//! from the "additional processes waiting" line, Barrier's table without
//! message sizes; the same numbers as the CSV path.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn parsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_parsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("parsim runs")
}

fn json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("JSON")
}

fn temp(name: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("validate_imb");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p
}

#[test]
fn imb_2019_output_is_read_block_by_block() {
    // IMB 2019: PingPong, PingPing and Sendrecv; PingPong ran on 2 of 4.
    let o = parsim(&[
        "validate",
        "examples/imb/pingpong.mpl",
        "--table",
        "calibrate/tests/data/imb2019_pingpong.txt",
        "--format",
        "json",
    ]);
    let v = json(&o);
    assert!(
        v["measured"]
            .as_str()
            .is_some_and(|m| m.contains("PingPong") && m.contains("t[usec]")),
        "{v}"
    );
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 24);
    assert_eq!(rows[0]["active"], 2);
    assert_eq!(rows[0]["total"], 4);
    assert_eq!(rows[0]["bytes"], 0);
    assert_eq!(rows[0]["measured_usec"], 1.08);
    // Several benchmarks and a program named like none of them.
    let o = parsim(&[
        "validate",
        "examples/imb/bcast.mpl",
        "--table",
        "calibrate/tests/data/imb2019_pingpong.txt",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("several benchmarks (PingPong, PingPing, Sendrecv)"),
        "{err}"
    );
    // --benchmark chooses; a missing column is named.
    let o = parsim(&[
        "validate",
        "examples/imb/pingping.mpl",
        "--table",
        "calibrate/tests/data/imb2019_pingpong.txt",
        "--benchmark",
        "pingping",
        "--time-col",
        "t_max[usec]",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no column t_max[usec]"), "{err}");
    assert!(
        err.contains("#bytes #repetitions t[usec] Mbytes/sec"),
        "{err}"
    );
}

/// The EKSS-1 CSV tables written out as PMB 2.2 prints them.
fn pmb_text(csv: &str, benchmark: &str) -> String {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = |name: &str| header.iter().position(|c| *c == name);
    let (active, total, bytes, reps) = (
        col("active_procs"),
        col("total_procs"),
        col("bytes"),
        col("repetitions"),
    );
    let time = header
        .iter()
        .position(|c| c.ends_with("usec"))
        .expect("a time column");
    let mut out = String::from("#    PALLAS MPI Benchmark Suite V2.2, MPI-1 part\n");
    let mut current: Option<(String, String)> = None;
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        let a = active.map_or("2", |i| cells[i]).to_owned();
        let t = total.map_or(a.clone(), |i| cells[i].to_owned());
        if current.as_ref() != Some(&(a.clone(), t.clone())) {
            out.push_str(&format!(
                "#-----\n# Benchmarking {benchmark} \n# ( #processes = {a} )\n"
            ));
            let waiting = t.parse::<u32>().expect("n") - a.parse::<u32>().expect("n");
            if waiting > 0 {
                out.push_str(&format!(
                    "# ( {waiting} additional processes waiting in MPI_Barrier)\n"
                ));
            }
            out.push_str("#-----\n");
            out.push_str(if bytes.is_some() {
                "       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n"
            } else {
                " #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n"
            });
            current = Some((a, t));
        }
        let v: f64 = cells[time].parse().expect("time");
        if let Some(b) = bytes {
            out.push_str(&format!("{:>13} ", cells[b]));
        }
        let r = reps.map_or("1000000", |i| cells[i]);
        out.push_str(&format!(
            "{r:>12} {:>12.2} {:>12.2} {:>12.2}\n",
            v * 0.9,
            v * 1.1,
            v
        ));
    }
    out
}

#[test]
fn pmb_text_gives_the_csv_results() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/validation/ekss1");
    if !shared.exists() {
        eprintln!("skipped: {} is not here", shared.display());
        return;
    }
    for (csv, program, benchmark, extra) in [
        (
            "pmb_alltoall_1ppn.csv",
            "examples/imb/alltoall.mpl",
            "Alltoall",
            None,
        ),
        (
            "pmb_barrier_1ppn.csv",
            "examples/imb/barrier.mpl",
            "Barrier",
            Some("ekss1_H_usec"),
        ),
    ] {
        let csv_path = shared.join(csv);
        let text = std::fs::read_to_string(&csv_path).expect("csv");
        let pmb = temp(&format!("{benchmark}.txt"), &pmb_text(&text, benchmark));
        let mut from_csv = vec![
            "validate",
            program,
            "--machine",
            "examples/machines/ekss1.toml",
            "--ppn",
            "1",
            "--format",
            "json",
        ];
        let mut from_pmb = from_csv.clone();
        let csv_str = csv_path.to_str().expect("utf-8");
        from_csv.extend(["--table", csv_str]);
        if let Some(c) = extra {
            from_csv.extend(["--time-col", c]);
        }
        from_pmb.extend(["--table", pmb.to_str().expect("utf-8")]);
        let (a, b) = (json(&parsim(&from_csv)), json(&parsim(&from_pmb)));
        assert_eq!(a["rows"], b["rows"], "{benchmark}");
        assert_eq!(a["median_abs_error"], b["median_abs_error"]);
        assert!(!b["rows"].as_array().expect("rows").is_empty());
    }
}
