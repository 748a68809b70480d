//! `measured_to`: a channel records the largest message of the table it
//! was fitted to, and a run that sends larger messages over it is warned
//! (a copy slows where its buffers leave the caches, which a table that
//! ends inside them cannot show: VALIDATION.md section 10).

mod support;

/// An SMP machine of 2 ranks per node whose `[network]` and `[shm]` were
/// measured up to `network_to` and `shm_to` (`None` leaves the key out).
fn machine(dir: &support::TempDir, network_to: Option<&str>, shm_to: Option<&str>) -> String {
    let key = |to: Option<&str>| to.map_or(String::new(), |s| format!("measured_to = \"{s}\"\n"));
    let text = format!(
        r#"name = "measured range"
model = "smp"
[node]
memcpy = "10 GB/s"
ranks_per_node = 2
[network]
latency = "2 us"
bandwidth = "10 GB/s"
eager_limit = "64 KiB"
{}[shm]
latency = "0.5 us"
bandwidth = "20 GB/s"
eager_limit = "64 KiB"
{}"#,
        key(network_to),
        key(shm_to)
    );
    dir.file("machine.toml", &text).display().to_string()
}

/// Rank 0 sends `shm_bytes` to rank 1 (its node) and `net_bytes` to rank
/// 2 (the next node).
fn program(dir: &support::TempDir, shm_bytes: u64, net_bytes: u64) -> String {
    let text = format!(
        "if rank == 0 {{\n\
         \x20   send(to: 1, bytes: {shm_bytes})\n\
         \x20   send(to: 2, bytes: {net_bytes})\n\
         }} else if rank == 1 {{\n\
         \x20   recv(from: 0, bytes: {shm_bytes})\n\
         }} else if rank == 2 {{\n\
         \x20   recv(from: 0, bytes: {net_bytes})\n\
         }}\n"
    );
    dir.file("prog.mpl", &text).display().to_string()
}

fn run(machine: &str, program: &str) -> String {
    let o = support::parsim(&["run", program, "--ranks", "4", "--machine", machine, "-q"]);
    assert!(o.status.success(), "{}", support::stderr(&o));
    support::stderr(&o)
}

#[test]
fn a_message_beyond_the_channel_table_is_warned_naming_the_channel() {
    let dir = support::temp_dir();
    let m = machine(&dir, Some("4 MiB"), Some("4 MiB"));
    // 8 MiB inside the node, 1 MiB between nodes: only [shm] went beyond.
    let err = run(&m, &program(&dir, 8 << 20, 1 << 20));
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(
        warnings,
        [
            "warning: messages of up to 8 MiB went over [shm], whose table was measured up to 4 MiB (shm.measured_to): their time extends the last segment of the fit, which no measurement supports (a copy slows where its buffers leave the caches); calibrate with larger messages (`calibrate net --run ... --max-bytes SIZE`) for a trustworthy prediction"
        ],
        "{err}"
    );
    // Both beyond: one warning per channel, network first.
    let err = run(&m, &program(&dir, 8 << 20, 16 << 20));
    let channels: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("warning: messages of up to"))
        .map(|l| {
            l.split(" went over ")
                .nth(1)
                .unwrap_or("")
                .split(',')
                .next()
                .unwrap_or("")
        })
        .collect();
    assert_eq!(channels, ["[network]", "[shm]"], "{err}");
}

#[test]
fn messages_within_the_table_or_a_machine_without_the_key_give_no_warning() {
    let dir = support::temp_dir();
    let within = run(
        &machine(&dir, Some("4 MiB"), Some("4 MiB")),
        &program(&dir, 4 << 20, 4 << 20),
    );
    assert!(!within.contains("warning"), "{within}");
    let without = run(
        &machine(&dir, None, None),
        &program(&dir, 64 << 20, 64 << 20),
    );
    assert!(!without.contains("warning"), "{without}");
}

#[test]
fn the_machine_shows_the_range_and_a_bad_value_names_the_key() {
    let dir = support::temp_dir();
    let o = support::parsim(&["machine", &machine(&dir, None, Some("128 MiB"))]);
    assert!(o.status.success(), "{}", support::stderr(&o));
    let out = support::stdout(&o);
    let shm = out
        .lines()
        .find(|l| l.starts_with("shared memory:"))
        .unwrap_or_default();
    assert!(shm.ends_with(", measured up to 128 MiB"), "{out}");
    let o = support::parsim(&["machine", &machine(&dir, Some("lots"), None)]);
    assert!(!o.status.success());
    assert!(
        support::stderr(&o).contains("network.measured_to"),
        "{}",
        support::stderr(&o)
    );
}

#[test]
fn calibrate_net_records_the_largest_measured_size() {
    let Some(ekss1) = support::shared_data("validation/ekss1", "pmb_pingpong_1ppn.csv") else {
        return;
    };
    let table = ekss1.join("pmb_pingpong_1ppn.csv");
    let dir = support::temp_dir();
    let out = dir.join("m.toml");
    let o = support::parsim(&[
        "calibrate",
        "net",
        table.to_str().unwrap_or_default(),
        "-q",
        "-o",
        out.to_str().unwrap_or_default(),
    ]);
    assert!(o.status.success(), "{}", support::stderr(&o));
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    // PMB's PingPong of EKSS-1 goes to 4 MiB.
    assert!(text.contains("\nmeasured_to = \"4 MiB\"\n"), "{text}");
}

#[test]
fn max_bytes_below_the_ladder_or_above_a_gibibyte_is_refused() {
    for size in ["1MiB", "2GiB"] {
        let o = support::parsim(&[
            "calibrate",
            "net",
            "--run",
            "mpirun -np 2",
            "--max-bytes",
            size,
            "-q",
        ]);
        assert!(!o.status.success());
        assert!(
            support::stderr(&o).contains("--max-bytes must be from 4 MiB to 1 GiB"),
            "{}",
            support::stderr(&o)
        );
    }
}
