//! Variables never live at once share a frame slot (`sim_core::slots`):
//! every program of the repository runs the same with and without it.

use std::path::{Path, PathBuf};

fn programs(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("a directory of the repository")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            programs(&p, out);
        } else if p.extension().is_some_and(|e| e == "mpl") {
            out.push(p);
        }
    }
}

/// What a run shows: the prediction to the last bit, the counts, every
/// printed line, or the error.
fn run(program: &sim_core::ir::Program, ranks: u32, share_slots: bool) -> String {
    let machine = models::AnyMachine::builtin_default();
    let mut lines = Vec::new();
    let cfg = sim_core::SimConfig {
        ranks,
        // Long runs stop at the same event in both modes (the runaway report
        // then says where each rank is), which keeps this test short.
        max_events: 300_000,
        share_slots,
        ..sim_core::SimConfig::default()
    };
    let report = sim_core::simulate(program, &mut machine.start(ranks), cfg, &mut |l| {
        lines.push(format!("{} {:e} {}", l.rank, l.time, l.text));
    });
    match report {
        Ok(r) => format!(
            "{:x} {} {} {:?}\n{}",
            r.predicted_seconds.to_bits(),
            r.messages,
            r.events,
            r.ranks
                .iter()
                .map(|s| s.finish.to_bits())
                .collect::<Vec<_>>(),
            lines.join("\n")
        ),
        Err(e) => format!("error: {e}\n{}", lines.join("\n")),
    }
}

#[test]
fn every_program_runs_the_same_with_shared_slots() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["examples", "bench", "tests/semantics", "tests/check"] {
        programs(&root.join(dir), &mut files);
    }
    assert!(files.len() > 40, "{} programs", files.len());
    let mut compared = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable");
        let Ok(program) = frontend::compile(&file.display().to_string(), &text) else {
            continue;
        };
        for ranks in [1, 2, 4, 9] {
            let shared = run(&program, ranks, true);
            let own = run(&program, ranks, false);
            assert_eq!(shared, own, "{} at {ranks} ranks", file.display());
            compared += 1;
        }
    }
    assert!(compared > 150, "{compared} runs compared");
}

/// W2's 16 variables in 6 slots: `n` dies where `east` is written (its
/// last read is in `east`'s own expression), `x` and `y` once the
/// neighbours are known, and the 8 request handles, never read (`waitall()`
/// waits for the rank's pending requests), share one slot with `y`.
#[test]
fn the_stencil_needs_fewer_slots() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/w2_stencil2d.mpl"),
    )
    .expect("readable");
    let mut program = frontend::compile("w2_stencil2d.mpl", &text).expect("compiles");
    let main = program.main as usize;
    assert_eq!(program.functions[main].num_locals, 16);
    sim_core::slots::compact(&mut program);
    program.validate().expect("a valid program");
    assert_eq!(
        program.functions[main].local_names,
        [
            "n/east",
            "x/it",
            "y/r0/r1/r2/r3/s0/s1/s2/s3",
            "north",
            "south",
            "west"
        ]
    );
    assert_eq!(program.functions[main].num_locals, 6);
}
