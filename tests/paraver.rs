//! `parsim run --trace FILE.prv`: a Paraver trace (.prv, .pcf, .row) that
//! follows the format (header, record shapes, ids, sorted times) and says
//! what the run's report says (compute time per rank, message count).

mod support;

use approx::assert_relative_eq;

#[test]
fn heat_as_a_paraver_trace() {
    let dir = support::temp_dir();
    let prv = dir.join("heat.prv");
    let o = support::parsim_command()
        .args([
            "run",
            "examples/heat.mpl",
            "-n",
            "4",
            "-p",
            "iters=3",
            "-p",
            "n=500",
        ])
        .args([
            "--machine",
            "examples/machines/fast-ethernet.toml",
            "--format",
            "json",
        ])
        .arg("--trace")
        .arg(&prv)
        .env("SOURCE_DATE_EPOCH", "0")
        .output()
        .expect("parsim runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rep: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json report");
    let text = std::fs::read_to_string(&prv).expect(".prv written");
    let pcf = std::fs::read_to_string(dir.join("heat.pcf")).expect(".pcf written");
    let row = std::fs::read_to_string(dir.join("heat.row")).expect(".row written");

    let mut lines = text.lines();
    let header = lines.next().expect("a header");
    let predicted_ns = (rep["predicted_seconds"].as_f64().expect("predicted") * 1e9).round() as u64;
    assert_eq!(
        header,
        format!("#Paraver (01/01/1970 at 00:00):{predicted_ns}_ns:1(4):1:4(1:1,1:1,1:1,1:1)")
    );

    let mut running = [0u64; 4];
    let mut comms = 0u64;
    let mut last = 0u64;
    for line in lines {
        let f: Vec<u64> = line
            .split(':')
            .map(|x| x.parse().unwrap_or_else(|_| panic!("a number in `{line}`")))
            .collect();
        let (kind, cpu, appl, task, thread) = (f[0], f[1], f[2], f[3], f[4]);
        assert!(
            (1..=4).contains(&cpu) && appl == 1 && task == cpu && thread == 1,
            "{line}"
        );
        let time = f[5];
        assert!(time >= last, "records sorted by time: {line}");
        last = time;
        assert!(time <= predicted_ns, "{line}");
        match kind {
            1 => {
                assert_eq!(f.len(), 8, "{line}");
                assert!(f[6] >= f[5] && f[6] <= predicted_ns, "{line}");
                assert!([1, 3, 4].contains(&f[7]), "a state of the .pcf: {line}");
                if f[7] == 1 {
                    running[task as usize - 1] += f[6] - f[5];
                }
            }
            2 => assert!(f.len() >= 8 && f.len().is_multiple_of(2), "{line}"),
            3 => {
                assert_eq!(f.len(), 15, "{line}");
                assert_eq!(f[5], f[6], "logical = physical send: {line}");
                assert!((1..=4).contains(&f[7]) && f[7] != cpu, "{line}");
                assert!(f[11] >= f[5], "received after sent: {line}");
                assert_eq!(f[13], 4000, "a halo row of 500 doubles: {line}");
                comms += 1;
            }
            _ => panic!("unknown record `{line}`"),
        }
    }
    assert_eq!(comms, rep["messages"].as_u64().expect("messages"));
    for (r, &ns) in running.iter().enumerate() {
        let compute = rep["ranks"][r]["compute_seconds"]
            .as_f64()
            .expect("compute");
        assert_relative_eq!(ns as f64 * 1e-9, compute, max_relative = 1e-6);
    }
    assert!(
        pcf.contains("STATES\n0    Idle\n1    Running\n3    Waiting a message\n"),
        "{pcf}"
    );
    assert!(pcf.contains("90000001    Operation or kernel"), "{pcf}");
    assert!(
        pcf.contains("compute stencil") && pcf.contains("sendrecv"),
        "{pcf}"
    );
    assert!(
        row.contains("LEVEL THREAD SIZE 4\nrank 0\nrank 1\nrank 2\nrank 3\n"),
        "{row}"
    );
}
