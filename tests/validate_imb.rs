//! `parsim validate --table` with benchmark output as the benchmarks print
//! it. IMB-MPI1 / PMB: benchmark and process-count blocks, "k active of N"
//! from the "additional processes waiting" line, Barrier's table without
//! message sizes; the same numbers as the CSV path. OSU: the skeletons of
//! examples/osu against OSU-formatted tables (closed forms and round trips).

mod support;

use std::process::Output;

use support::{parsim, temp_dir};

fn json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("JSON")
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
    let Some(shared) = support::shared_data("validation/ekss1", "pmb_alltoall_1ppn.csv") else {
        return;
    };
    let tmp = temp_dir();
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
        let pmb = tmp.file(&format!("{benchmark}.txt"), &pmb_text(&text, benchmark));
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
        let (a, mut b) = (json(&parsim(&from_csv)), json(&parsim(&from_pmb)));
        // PMB's text has t_min and t_max beside t_avg, compared as a pair
        // too (`range`); the CSV has t_avg only. The rest is the same.
        for row in b["rows"].as_array_mut().expect("rows") {
            row.as_object_mut().expect("a row").remove("range");
        }
        assert_eq!(a["rows"], b["rows"], "{benchmark}");
        assert_eq!(a["median_abs_error"], b["median_abs_error"]);
        assert!(!b["rows"].as_array().expect("rows").is_empty());
    }
}

/// A machine whose one-way eager message takes exactly
/// o_s + L + o_r + n·G = 1 + 5 + 1 us + n · 10 ns.
const LOGGP: &str = r#"
name = "closed-form"
model = "hardware"
[node]
cpu_rate = 1
memcpy = "10 GB/s"
[network]
latency = "5 us"
send_overhead = "1 us"
recv_overhead = "1 us"
bandwidth = "100 MB/s"
eager_limit = "64 MiB"
"#;

/// The numeric rows a skeleton prints from rank 0 (its table, header
/// lines left out), run by `parsim` with `args`.
fn table_rows(args: &[&str]) -> Vec<Vec<f64>> {
    let o = parsim(args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    support::rank0_table(&String::from_utf8_lossy(&o.stdout))
}

#[test]
fn osu_latency_skeleton_is_half_a_round_trip() {
    let tmp = temp_dir();
    let machine = tmp.file("closed-form.toml", LOGGP);
    let rows = table_rows(&[
        "run",
        "examples/osu/latency.mpl",
        "--ranks",
        "2",
        "--machine",
        machine.to_str().expect("utf-8"),
        "-p",
        "max_bytes=16384",
        "-q",
    ]);
    // 0, 1, 2, 4, ..., 16384: 16 sizes; 10000 iterations up to 8 KiB, 1000 above.
    assert_eq!(rows.len(), 16);
    for r in &rows {
        let n = r[0];
        let expected = 7.0 + n * 0.01;
        approx::assert_relative_eq!(r[4], expected, max_relative = 1e-9);
        assert_eq!(r[1], if n > 8192.0 { 1000.0 } else { 10000.0 });
    }
}

#[test]
fn osu_multi_lat_is_half_a_round_trip_and_the_barrier_in_its_span() {
    // 2 pairs on 4 nodes. Each pair's round trips cost what osu_latency's
    // do, 2 (T(n) + o_r) = 2 (7 us + n G); OMB 5.x starts each rank's clock
    // before a barrier of all ranks (osu_multi_lat.c), so every size carries
    // that barrier once, spread over 2 * iterations. What the barrier adds
    // does not depend on the message size as long as the iteration count
    // stays the same (the ranks reach it with the same skew at every size).
    let tmp = temp_dir();
    let machine = tmp.file("closed-form.toml", LOGGP);
    let m = machine.to_str().expect("utf-8");
    let rows = table_rows(&[
        "run",
        "examples/osu/multi_lat.mpl",
        "--ranks",
        "4",
        "--machine",
        m,
        "-p",
        "max_bytes=16384",
        "-q",
    ]);
    assert_eq!(rows.len(), 16);
    // The barrier's share, in us per size: the same for every size below
    // 8 KiB, more than nothing and less than two 4-rank barriers' rounds
    // (2 x 2 (T(0) + o_r) = 28 us) plus the skew of one round trip.
    let barrier_us = |r: &Vec<f64>| (r[4] - (7.0 + r[0] * 0.01)) * 2.0 * r[1];
    let b0 = barrier_us(&rows[0]);
    assert!(b0 > 0.0 && b0 < 28.0 + 14.0, "{b0}");
    for r in rows.iter().filter(|r| r[0] <= 8192.0) {
        approx::assert_relative_eq!(barrier_us(r), b0, max_relative = 1e-6);
        assert_eq!(r[1], 10000.0);
    }
    assert_eq!(rows[15][1], 1000.0);
    // OSU's own table of the same run reads back through validate.
    let mut table =
        String::from("# OSU MPI Multi Latency Test v5.6.2\n# Size          Latency (us)\n");
    for r in &rows {
        table.push_str(&format!("{:<10}{:>20.2}\n", r[0], r[4]));
    }
    let table = tmp.file("osu_multi_lat.txt", &table);
    let v = json(&parsim(&[
        "validate",
        "examples/osu/multi_lat.mpl",
        "--table",
        table.to_str().expect("utf-8"),
        "--ranks",
        "4",
        "--machine",
        m,
        "-p",
        "max_bytes=16384",
        "--format",
        "json",
    ]));
    let compared = v["rows"].as_array().expect("rows");
    assert_eq!(compared.len(), 16, "{v}");
    for r in compared {
        assert!(r["error"].as_f64().expect("error").abs() < 1e-3, "{r}");
    }
    // An odd count: the last rank has no partner, and the run says so.
    let o = parsim(&[
        "run",
        "examples/osu/multi_lat.mpl",
        "--ranks",
        "3",
        "-p",
        "max_bytes=4",
        "-q",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("rank 2 has no partner"));
}

/// OSU's table of a run of an examples/osu skeleton: what OSU would print
/// if the machine were exactly the model (`-f`: avg, min, max, iterations).
fn osu_table(program: &str, ranks: &str, title: &str, full: bool, extra: &[&str]) -> String {
    let mut args = vec!["run", program, "--ranks", ranks, "-q"];
    args.extend_from_slice(extra);
    let o = parsim(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let mut text = format!("# OSU MPI {title} Latency Test v5.6.2\n");
    let sized = !program.ends_with("barrier.mpl");
    text.push_str(match (sized, full) {
        (true, true) => {
            "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations\n"
        }
        (true, false) => "# Size       Avg Latency(us)\n",
        (false, _) => "# Avg Latency(us)\n",
    });
    for line in out.lines().filter_map(|l| l.strip_prefix("[0] ")) {
        if line.starts_with('#') {
            continue;
        }
        let v: Vec<&str> = line.split_whitespace().collect();
        let t = |i: usize| v[i].parse::<f64>().expect("number");
        if sized && full {
            text.push_str(&format!(
                "{:<10}{:>18.4}{:>18.4}{:>18.4}{:>12}\n",
                v[0],
                t(4),
                t(2),
                t(3),
                v[1]
            ));
        } else if sized {
            text.push_str(&format!("{:<10}{:>18.4}\n", v[0], t(4)));
        } else {
            text.push_str(&format!("{:>18.4}\n", t(3)));
        }
    }
    text
}

#[test]
fn osu_output_round_trips_through_validate() {
    let tmp = temp_dir();
    let machine = tmp.file("closed-form-osu.toml", LOGGP);
    let m = machine.to_str().expect("utf-8");
    for (program, title, full, column) in [
        ("examples/osu/allreduce.mpl", "Allreduce", true, "t_avg"),
        ("examples/osu/allreduce.mpl", "Allreduce", true, "t_max"),
        ("examples/osu/bcast.mpl", "Broadcast", false, "t_avg"),
        ("examples/osu/barrier.mpl", "Barrier", false, "t_avg"),
        ("examples/osu/gatherv.mpl", "Gatherv", false, "t_avg"),
        (
            "examples/osu/reduce_scatter.mpl",
            "Reduce_scatter",
            true,
            "t_min",
        ),
        (
            "examples/osu/alltoallv.mpl",
            "All-to-Allv Personalized Exchange",
            true,
            "t_avg",
        ),
    ] {
        let extra: &[&str] = if program.ends_with("barrier.mpl") {
            &["--machine", m]
        } else {
            &["--machine", m, "-p", "max_bytes=65536"]
        };
        let table = tmp.file(
            &format!("{title}-{column}.txt"),
            &osu_table(program, "4", title, full, extra),
        );
        let mut args = vec![
            "validate",
            program,
            "--table",
            table.to_str().expect("utf-8"),
            "--ranks",
            "4",
            "--column",
            column,
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        let v = json(&parsim(&args));
        let rows = v["rows"].as_array().expect("rows");
        assert!(!rows.is_empty(), "{program}");
        // Four decimals in the table: agreement to 1e-4 us.
        for r in rows {
            let (m, p) = (
                r["measured_usec"].as_f64().expect("m"),
                r["predicted_usec"].as_f64().expect("p"),
            );
            assert!((m - p).abs() <= 6e-5, "{program} {column}: {m} vs {p}");
            assert_eq!(r["active"], 4);
        }
        assert!(
            v["measured"].as_str().is_some_and(|s| s.contains(title)),
            "{v}"
        );
    }
}

#[test]
fn osu_7_samples_are_read_or_refused_by_name() {
    let v = json(&parsim(&[
        "validate",
        "examples/osu/latency.mpl",
        "--table",
        "calibrate/tests/data/osu7_latency.txt",
        "-p",
        "max_bytes=4194304",
        "--format",
        "json",
    ]));
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 23);
    assert_eq!(rows[0]["bytes"], 1);
    assert_eq!(rows[0]["measured_usec"], 1.62);
    assert_eq!(rows[0]["total"], 2);
    // A bandwidth table is read as time per message, bytes / (MB/s), which
    // the bandwidth skeletons print.
    let v = json(&parsim(&[
        "validate",
        "examples/osu/bw.mpl",
        "--table",
        "calibrate/tests/data/osu7_bw.txt",
        "--format",
        "json",
    ]));
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 23);
    assert_eq!(rows[0]["bytes"], 1);
    let usec = rows[0]["measured_usec"].as_f64().expect("number");
    assert!((usec - 1.0 / 3.21).abs() < 1e-12, "{usec}");
    assert_eq!(rows[4]["bytes"], 16);
    let usec = rows[4]["measured_usec"].as_f64().expect("number");
    assert!((usec - 16.0 / 51.20).abs() < 1e-12, "{usec}");
    assert_eq!(rows[0]["total"], 2);
}

/// An osu_mbw_mr table says its pair count: the comparison runs that many
/// pairs (twice the ranks) whatever --ranks says, and its MB/s is read as
/// the aggregate's time per message. Alaska, 4 pairs, 4 per node.
#[test]
fn osu_mbw_mr_tables_set_the_process_count() {
    let Some(dir) = support::shared_data(
        "validation/alaska/roce-gcc9-openmpi4-ucx/omb/Osu_mbw_mr__4",
        "rfm_Osu_mbw_mr__4_job.out",
    ) else {
        return;
    };
    let table = dir.join("rfm_Osu_mbw_mr__4_job.out");
    let v = json(&parsim(&[
        "validate",
        "examples/osu/mbw_mr.mpl",
        "--table",
        table.to_str().expect("utf-8"),
        "--ppn",
        "4",
        "--format",
        "json",
    ]));
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 23, "sizes 1 B .. 4 MiB");
    assert_eq!(rows[0]["total"], 8);
    // Row "1  MB/s": the time per message is 1 / (MB/s) us.
    let text = std::fs::read_to_string(&table).expect("read");
    let mb_per_s: f64 = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some("1"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .expect("a row for 1 byte");
    let usec = rows[0]["measured_usec"].as_f64().expect("number");
    assert!((usec - 1.0 / mb_per_s).abs() < 1e-12, "{usec} {mb_per_s}");
}

/// IMB's 0-byte row of a collective: under MPICH's and Open MPI's rules
/// (the library's zero-count rule, `Library::zero_count`) the call returns at
/// once, the prediction is 0 and the row is shown as not comparable, out
/// of the statistics; a machine whose library synchronises on it (EKSS-1's
/// ScaMPI: `zero_count = "barrier"`) predicts the barrier and compares it.
#[test]
fn zero_byte_collective_rows_are_not_comparable() {
    let tmp = temp_dir();
    let table = tmp.file(
        "imb_allreduce.txt",
        "#----------------------------------------------------------------\n\
         # Benchmarking Allreduce\n\
         # #processes = 4\n\
         #----------------------------------------------------------------\n\
         \x20      #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n\
         \x20           0         1000         0.03         0.04         0.03\n\
         \x20           4         1000         2.10         2.60         2.40\n\
         \x20           8         1000         2.20         2.70         2.50\n\
         \x20          16         1000         2.30         2.90         2.60\n",
    );
    let t = table.to_str().expect("utf-8");
    let args = |machine: &'static str| {
        let mut a = vec![
            "validate",
            "examples/imb/allreduce.mpl",
            "--table",
            t,
            "-p",
            "max_bytes=16",
            "--format",
            "json",
        ];
        if !machine.is_empty() {
            a.extend(["--machine", machine, "--ppn", "1"]);
        }
        a
    };
    let v = json(&parsim(&args("")));
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[0]["bytes"], 0);
    assert_eq!(rows[0]["measured_usec"], 0.03);
    assert_eq!(rows[0]["predicted_usec"], 0.0);
    assert_eq!(rows[0]["comparable"], false);
    assert_eq!(rows[0]["note"], "0 bytes, no data moved");
    assert_eq!(v["groups"][0]["not_comparable"], 1);
    let note = v["notes"][0].as_str().expect("a note");
    assert!(
        note.contains("mpich-3, the library's zero-count rule"),
        "{note}"
    );
    // The statistics are those of the three other rows.
    let mut errors: Vec<f64> = rows[1..]
        .iter()
        .map(|r| {
            assert_eq!(r["comparable"], true);
            r["error"].as_f64().expect("error").abs()
        })
        .collect();
    errors.sort_by(f64::total_cmp);
    assert_eq!(v["median_abs_error"].as_f64(), Some(errors[1]));
    assert_eq!(v["max_abs_error"].as_f64(), Some(errors[2]));
    // The text says it in the row and below the table.
    let mut text_args = args("");
    text_args.truncate(6);
    let o = parsim(&text_args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("| 4/4 | 0 | 0.03 | 0.00 | not comparable (0 bytes, no data moved) |"),
        "{text}"
    );
    assert!(
        text.contains("all: 3 points and 1 not comparable, median"),
        "{text}"
    );
    // EKSS-1's library synchronises: the 0-byte row is a barrier, compared.
    let v = json(&parsim(&args("examples/machines/ekss1.toml")));
    let row = &v["rows"][0];
    assert_eq!(row["comparable"], true);
    assert!(
        row["predicted_usec"].as_f64().is_some_and(|p| p > 1.0),
        "{row}"
    );
    assert!(v["notes"].as_array().is_some_and(Vec::is_empty), "{v}");
}

/// Flags the table makes meaningless are refused with the usage error's
/// exit code (2), naming the flag and why.
#[test]
fn flags_the_table_would_ignore_are_refused() {
    let tmp = temp_dir();
    let csv = tmp.file(
        "procs.csv",
        "active_procs,total_procs,bytes,t_usec\n2,2,8,5.0\n",
    );
    let csv = csv.to_str().expect("utf-8");
    let imb = "calibrate/tests/data/imb2019_pingpong.txt";
    let osu_bw = "calibrate/tests/data/osu7_bw.txt";
    for (program, table, extra, expected) in [
        (
            "examples/imb/pingpong.mpl",
            imb,
            &["--ranks", "4"][..],
            "--ranks 4: the table sets the process counts by its process-count blocks",
        ),
        (
            "examples/imb/alltoall.mpl",
            csv,
            &["--ranks", "2"][..],
            "--ranks 2: the table sets the process counts by its process columns (active_procs, total_procs)",
        ),
        (
            "examples/imb/alltoall.mpl",
            csv,
            &["--benchmark", "Alltoall"][..],
            "--benchmark Alltoall: the table is a CSV table, not IMB output",
        ),
        (
            "examples/osu/bw.mpl",
            osu_bw,
            &["--total-col", "np"][..],
            "--total-col np: the table is an OSU bandwidth table, not CSV",
        ),
        (
            "examples/osu/bw.mpl",
            osu_bw,
            &["--time-col", "Bandwidth (MB/s)"][..],
            "--time-col Bandwidth (MB/s): the table is an OSU bandwidth table: its MB/s column is what is compared",
        ),
    ] {
        let mut args = vec!["validate", program, "--table", table];
        args.extend_from_slice(extra);
        let o = parsim(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(expected), "{extra:?}: {err}");
    }
    // Run mode's flags with --table, and table flags with --run: clap's
    // usage errors.
    for args in [
        &["validate", "examples/heat.mpl", "--table", csv, "--np", "2"][..],
        &[
            "validate",
            "examples/heat.mpl",
            "--table",
            csv,
            "--repeat",
            "2",
        ][..],
        &[
            "validate",
            "examples/heat.mpl",
            "--run",
            "mpirun -np {ranks}",
            "--ranks",
            "2",
        ][..],
    ] {
        let o = parsim(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
    // --ranks where the table does not say stays: OSU output.
    let v = json(&parsim(&[
        "validate",
        "examples/osu/bw.mpl",
        "--table",
        osu_bw,
        "--ranks",
        "2",
        "--format",
        "json",
    ]));
    assert_eq!(v["rows"][0]["total"], 2);
}

/// CSV through the `csv` crate: quoted cells are read, a row with an empty
/// cell the comparison needs is skipped with a warning on stderr naming
/// its line and column.
#[test]
fn csv_rows_with_empty_cells_are_skipped_with_a_warning() {
    let tmp = temp_dir();
    let machine = tmp.file("closed-form-csv.toml", LOGGP);
    let csv = tmp.file(
        "pingpong.csv",
        "# one-way times\n\"bytes\",\"t_usec\"\n\"0\",\"7.0\"\n1024,\n2048,\"27.48\"\n",
    );
    let o = parsim(&[
        "validate",
        "examples/osu/latency.mpl",
        "--table",
        csv.to_str().expect("utf-8"),
        "--machine",
        machine.to_str().expect("utf-8"),
        "-p",
        "max_bytes=2048",
        "--format",
        "json",
    ]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let v = json(&o);
    assert!(
        err.contains("pingpong.csv:4: the `t_usec` cell is empty; the row is skipped"),
        "{err}"
    );
    assert_eq!(v["skipped"].as_array().map(Vec::len), Some(1), "{v}");
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 2);
    // The closed form: 7 us + n * 10 ns; the 0-byte ping-pong is a
    // message, compared.
    assert_eq!(rows[0]["comparable"], true);
    assert!((rows[0]["predicted_usec"].as_f64().expect("p") - 7.0).abs() < 1e-9);
    assert!((rows[1]["predicted_usec"].as_f64().expect("p") - 27.48).abs() < 1e-9);
}

/// Bandwidth tables are shown and compared in their own unit: OSU's MB/s,
/// IMB's Msg/sec; the error of the bandwidth is -e/(1+e) of the time's e.
#[test]
fn bandwidth_tables_compare_in_their_own_unit() {
    let v = json(&parsim(&[
        "validate",
        "examples/osu/bw.mpl",
        "--table",
        "calibrate/tests/data/osu7_bw.txt",
        "--format",
        "json",
    ]));
    assert_eq!(v["unit"], "MB/s");
    let rows = v["rows"].as_array().expect("rows");
    // The MB/s as printed.
    assert_eq!(rows[0]["measured"], 3.21);
    assert_eq!(rows[4]["measured"], 51.2);
    let mut errors = Vec::new();
    for r in rows {
        let (e, t) = (
            r["error"].as_f64().expect("error"),
            r["time_error"].as_f64().expect("time error"),
        );
        assert!((e + t / (1.0 + t)).abs() < 1e-9, "{r}");
        let (m, p, bytes) = (
            r["predicted"].as_f64().expect("p"),
            r["predicted_usec"].as_f64().expect("p"),
            r["bytes"].as_f64().expect("bytes"),
        );
        assert!((m - bytes / p).abs() <= 1e-9 * m, "{r}");
        errors.push(e.abs());
    }
    errors.sort_by(f64::total_cmp);
    let n = errors.len();
    let median = if n % 2 == 1 {
        errors[n / 2]
    } else {
        (errors[n / 2 - 1] + errors[n / 2]) / 2.0
    };
    assert_eq!(v["median_abs_error"].as_f64(), Some(median));
    let Some(v) = alaska_uniband("IMB_Uniband_2", &[]) else {
        return;
    };
    assert_eq!(v["unit"], "Msg/sec");
    let rows = v["rows"].as_array().expect("rows");
    // "0  1000  0.00  7884473": a 0-byte message is a message, compared.
    assert_eq!(rows[0]["bytes"], 0);
    assert_eq!(rows[0]["measured"], 7884473.0);
    assert_eq!(rows[0]["comparable"], true);
    let usec = rows[0]["measured_usec"].as_f64().expect("usec");
    assert!((usec - 1e6 / 7884473.0).abs() < 1e-15, "{usec}");
}

/// MPICH 4.0.2 runs MPI_Allreduce of count 0 like a call of count 1 (its
/// other collectives of count 0 return at once; VALIDATION.md section 4.3):
/// under `library = "mpich-4"` the 0-byte Allreduce row is an exchange of
/// empty messages, predicted and compared, and the 0-byte Reduce row is
/// not; `zero_count = "return"` in the machine file overrides the rule.
#[test]
fn mpich_4_allreduce_of_count_0_communicates() {
    let tmp = temp_dir();
    let machine = |extra: &str| {
        format!(
            "name = \"mpich-4 zero\"\nmodel = \"hardware\"\n[node]\nmemcpy = \"1 GB/s\"\n\
             [network]\nlatency = \"5 us\"\nsend_overhead = \"1 us\"\nrecv_overhead = \"2 us\"\n\
             bandwidth = \"100 MB/s\"\neager_limit = \"64 KiB\"\n[collectives]\nlibrary = \"mpich-4\"\n{extra}"
        )
    };
    let rule = tmp.file("rule.toml", &machine(""));
    let forced = tmp.file("forced.toml", &machine("zero_count = \"return\"\n"));
    let table = |name: &str| {
        tmp.file(
            &format!("{name}.txt"),
            &format!(
                "# Benchmarking {name}\n# #processes = 2\n\
                 \x20      #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n\
                 \x20           0         1000         8.00         8.00         8.00\n\
                 \x20           4         1000         9.00         9.00         9.00\n"
            ),
        )
    };
    let first_row = |skeleton: &str, table: &std::path::Path, m: &std::path::Path| {
        let v = json(&parsim(&[
            "validate",
            skeleton,
            "--table",
            table.to_str().expect("utf-8"),
            "--machine",
            m.to_str().expect("utf-8"),
            "--ppn",
            "1",
            "-p",
            "max_bytes=4",
            "--format",
            "json",
        ]));
        v["rows"][0].clone()
    };
    let allreduce = table("Allreduce");
    // Two ranks on two nodes: one exchange of 0 bytes, T(0) + o_r = 8 us.
    let r = first_row("examples/imb/allreduce.mpl", &allreduce, &rule);
    assert_eq!(r["comparable"], true, "{r}");
    approx::assert_relative_eq!(
        r["predicted_usec"].as_f64().expect("f64"),
        8.0,
        max_relative = 1e-9
    );
    let r = first_row("examples/imb/allreduce.mpl", &allreduce, &forced);
    assert_eq!(r["comparable"], false, "{r}");
    let r = first_row("examples/imb/reduce.mpl", &table("Reduce"), &rule);
    assert_eq!(r["predicted_usec"], 0.0, "{r}");
    assert_eq!(r["comparable"], false, "{r}");
}

/// IMB prints t_min and t_max beside t_avg: validate compares the pair with
/// the simulated pair too. A table made from the IMB 2017 Bcast skeleton's
/// own run on a closed-form machine reads back with no error in any of the
/// three; the same table against PMB's loop timing (a rotating root, no
/// barrier after a call) misses the root's t_min although t_avg is close.
#[test]
fn imb_t_min_and_t_max_are_compared_as_a_pair() {
    let tmp = temp_dir();
    let machine = tmp.file("closed-form.toml", LOGGP);
    let m = machine.to_str().expect("utf-8");
    let rows = table_rows(&[
        "run",
        "examples/imb/bcast.mpl",
        "--ranks",
        "2",
        "--machine",
        m,
        "-p",
        "timing=2017",
        "-p",
        "max_bytes=1024",
        "-q",
    ]);
    let mut table = String::from(
        "# Benchmarking Bcast\n# #processes = 2\n       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n",
    );
    for v in rows {
        table.push_str(&format!(
            "{:>13} {:>12} {:>12.4} {:>12.4} {:>12.4}\n",
            v[0], v[1], v[2], v[3], v[4]
        ));
    }
    let table = tmp.file("imb_bcast.txt", &table);
    let t = table.to_str().expect("utf-8");
    let run = |timing: &str| {
        json(&parsim(&[
            "validate",
            "examples/imb/bcast.mpl",
            "--table",
            t,
            "--machine",
            m,
            "-p",
            timing,
            "-p",
            "max_bytes=1024",
            "--format",
            "json",
        ]))
    };
    let v = run("timing=2017");
    let range = &v["range"];
    assert_eq!(range["points"], 11, "{v}");
    for key in ["t_min_max_abs_error", "t_max_max_abs_error"] {
        assert!(range[key].as_f64().expect(key) < 1e-4, "{key}: {v}");
    }
    let row = &v["rows"][1]["range"];
    assert_eq!(
        row["measured_min_usec"].as_f64(),
        row["predicted_min_usec"]
            .as_f64()
            .map(|x| (x * 1e4).round() / 1e4)
    );
    let pmb = run("timing=2002");
    assert!(
        pmb["range"]["t_min_median_abs_error"]
            .as_f64()
            .expect("f64")
            > 0.5,
        "{pmb}"
    );
    // The text shows the pair's table and its two summaries.
    let o = parsim(&[
        "validate",
        "examples/imb/bcast.mpl",
        "--table",
        t,
        "--machine",
        m,
        "-p",
        "timing=2017",
        "-p",
        "max_bytes=1024",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("| active/total | bytes | t_min measured (us) |"),
        "{text}"
    );
    assert!(
        text.contains("\nt_min: 11 points, median |error| 0.0%"),
        "{text}"
    );
    assert!(
        text.contains("\nt_max: 11 points, median |error| 0.0%"),
        "{text}"
    );
}

/// IMB's Uniband and Biband with `-npmin` run on the first 2, 4, ...
/// processes in turn; the skeletons take `--param active=K`: the pairs of
/// the first K ranks, the others idle. On a machine of one rank per node
/// the pairs never meet, so the aggregate's time per message at K active
/// of 8 is a 2-rank run's over K / 2 (up to the skew with which the
/// group's barrier releases its ranks, spread over the samples: below
/// 1e-3 with 100 of them), and K = 2 of 8 is the 2-rank run itself. `parsim validate` then reads every block of an IMB
/// table of N processes (Alaska's intra-node Uniband, 2 to 64 of 64).
#[test]
fn imb_uniband_and_biband_run_on_the_first_k_ranks() {
    let tmp = temp_dir();
    let machine = tmp.file("loggp.toml", LOGGP);
    let m = machine.to_str().expect("utf-8 path");
    for skeleton in ["examples/imb/uniband.mpl", "examples/imb/biband.mpl"] {
        let run = |ranks: &str, active: &str| {
            table_rows(&[
                "run",
                skeleton,
                "-n",
                ranks,
                "--machine",
                m,
                "-q",
                "--param",
                "max_bytes=1024",
                "--param",
                "max_reps=100",
                "--param",
                &format!("active={active}"),
            ])
        };
        let two = run("2", "0");
        assert_eq!(two.len(), 12, "{skeleton}: 0 B and 1 B .. 1 KiB");
        for (active, pairs) in [("2", 1.0), ("4", 2.0), ("8", 4.0), ("0", 4.0)] {
            let rows = run("8", active);
            assert_eq!(rows.len(), two.len(), "{skeleton} {active}");
            for (got, alone) in rows.iter().zip(&two) {
                assert_eq!(got[0], alone[0]);
                approx::assert_relative_eq!(got[2], alone[2] / pairs, max_relative = 1e-3);
                if active == "2" {
                    approx::assert_relative_eq!(got[2], alone[2], max_relative = 1e-11);
                }
            }
        }
    }
    // Fewer samples per size than IMB's 1000: the same blocks, 100 times
    // fewer events.
    let extra = ["--machine", m, "--param", "max_reps=10"];
    let Some(v) = alaska_uniband("IMB_Uniband_1_0", &extra) else {
        return;
    };
    let rows = v["rows"].as_array().expect("rows");
    let mut blocks: Vec<u64> = rows
        .iter()
        .map(|r| r["active"].as_u64().expect("active"))
        .collect();
    blocks.dedup();
    assert_eq!(blocks, [2, 4, 8, 16, 32, 64]);
    assert_eq!(rows.len(), 6 * 24);
}

/// `parsim validate examples/imb/uniband.mpl` on Alaska's InfiniBand/Open
/// MPI IMB Uniband output in `test` (`IMB_Uniband_2`, ...), one rank per
/// node unless `extra` says more, as JSON; `None` where the shared data
/// is absent outside CI (`support::shared_data`).
fn alaska_uniband(test: &str, extra: &[&str]) -> Option<serde_json::Value> {
    let file = format!("rfm_{test}_job.out");
    let dir = support::shared_data(
        &format!("validation/alaska/ib-gcc9-openmpi4-ucx/imb/{test}"),
        &file,
    )?;
    let table = dir.join(&file);
    let mut args = vec![
        "validate",
        "examples/imb/uniband.mpl",
        "--table",
        table.to_str().expect("utf-8"),
        "--ppn",
        "1",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    Some(json(&parsim(&args)))
}
