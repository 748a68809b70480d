//! `parsim run --comm-matrix`: traffic per (source, destination) pair.

mod support;

use std::collections::BTreeSet;

#[test]
fn net_shows_its_two_dimensional_neighbour_pattern() {
    let dir = support::temp_dir();
    let csv = dir.join("net-matrix.csv");
    let o = support::parsim_command()
        .args([
            "run",
            "examples/net.mpl",
            "--ranks",
            "16",
            "--param",
            "iters=5",
            "--comm-matrix",
        ])
        .arg(&csv)
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&csv).expect("csv written");
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("source,destination,messages,bytes,seconds")
    );
    let pairs: BTreeSet<(u32, u32)> = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f[2], "5", "one message per iteration: {l}");
            (f[0].parse().expect("src"), f[1].parse().expect("dst"))
        })
        .collect();
    // 16 ranks form a 4 x 4 grid; each rank talks to its up, down, left and
    // right neighbours and to nobody else.
    let mut expected = BTreeSet::new();
    for r in 0..16u32 {
        let (row, col) = (r / 4, r % 4);
        if row > 0 {
            expected.insert((r, r - 4));
        }
        if row < 3 {
            expected.insert((r, r + 4));
        }
        if col > 0 {
            expected.insert((r, r - 1));
        }
        if col < 3 {
            expected.insert((r, r + 1));
        }
    }
    assert_eq!(pairs, expected);
    let svg = std::fs::read_to_string(csv.with_extension("svg")).expect("svg written");
    assert_eq!(
        svg.matches("<title>").count(),
        expected.len(),
        "one coloured cell per pair"
    );
}
