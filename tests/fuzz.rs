//! Fuzz targets: every reader of text that a user hands parsim, and whole
//! programs. Each target draws inputs with proptest; a panic or a broken
//! property fails the test with the smallest input proptest shrinks it to.
//!
//! - `source_text`: the lexer, parser, lowering and diagnostics rendering,
//!   on mutations of every skeleton in the repository (the corpus) and on
//!   token soup. Never a panic; an error renders.
//! - `machine_files`: `AnyMachine::from_toml_str` on mutations of every
//!   machine file in the repository; a machine that loads starts a run
//!   and answers a transfer.
//! - `benchmark_tables`: the IMB, OSU and CSV readers of `calibrate net`
//!   and `validate` on mutations of the measured tables in the repository.
//! - `blocks_files`: `BlocksFile::parse` on mutations of the blocks files.
//! - `programs`: random valid communication programs (ring and pair
//!   exchanges, nonblocking exchanges, wildcard gathers, collectives on
//!   split communicators, carried values, loops, compute), simulated twice
//!   on 1-9 ranks: no error, no deadlock, the same output bit for bit.
//! - `emit_c_differential`: such programs (without `wtime()`), built by
//!   `parsim build-mpi` and run under `mpirun` on 1-4 ranks, print what the
//!   simulation prints (every value a rank computes, in its order). Needs
//!   MPICH; its case count is `PARSIM_FUZZ_MPI_CASES` (about 1.5 s each).
//!
//! `cargo test` runs a smoke pass of each (a few seconds in all). A long
//! campaign sets the number of inputs per target (docs/fuzzing.md records
//! the campaigns run and what they found):
//!
//! ```text
//! PARSIM_FUZZ_CASES=10000000 cargo test --release --test fuzz -- --nocapture
//! ```

use std::path::{Path, PathBuf};
use std::time::Instant;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use support::ROOT;

mod support;

/// Inputs per target: `PARSIM_FUZZ_CASES`, else the smoke pass's `smoke`.
fn cases(smoke: u32) -> u32 {
    cases_from("PARSIM_FUZZ_CASES", smoke)
}

/// Inputs per target: the variable `var`, else `smoke`.
fn cases_from(var: &str, smoke: u32) -> u32 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(smoke)
}

/// Runs `property` on `cases` inputs of `strategy`; reports the count and
/// the time (the campaign's figures).
fn fuzz<S: Strategy>(
    name: &str,
    smoke: u32,
    strategy: S,
    property: impl Fn(S::Value) -> Result<(), TestCaseError>,
) {
    // Shrinking a text input takes long; a few hundred steps suffice.
    fuzz_runs(name, cases(smoke), 2_000, strategy, property);
}

/// [`fuzz`] with the number of inputs and of shrinking steps given.
fn fuzz_runs<S: Strategy>(
    name: &str,
    n: u32,
    max_shrink_iters: u32,
    strategy: S,
    property: impl Fn(S::Value) -> Result<(), TestCaseError>,
) {
    let mut runner = TestRunner::new(Config {
        cases: n,
        failure_persistence: None,
        max_shrink_iters,
        ..Config::default()
    });
    let start = Instant::now();
    if let Err(e) = runner.run(&strategy, property) {
        panic!("fuzz target {name}: {e}");
    }
    eprintln!(
        "fuzz {name}: {n} inputs in {:.1} s",
        start.elapsed().as_secs_f64()
    );
}

/// The files under `dir` (recursively) whose names end in one of `exts`.
fn corpus(dir: &str, exts: &[&str]) -> Vec<String> {
    fn walk(p: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(p) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                walk(&path, exts, out);
            } else if path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| exts.iter().any(|x| n.ends_with(x)))
            {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&Path::new(ROOT).join(dir), exts, &mut files);
    files.sort();
    let texts: Vec<String> = files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .collect();
    assert!(!texts.is_empty(), "no corpus in {dir} ({exts:?})");
    texts
}

/// One edit of a text: at a position (a fraction of its length), delete,
/// duplicate or replace a span, or insert a token.
#[derive(Debug, Clone)]
enum Edit {
    Delete(f64, usize),
    Duplicate(f64, usize),
    Insert(f64, String),
    Replace(f64, usize, String),
}

fn edit(tokens: &'static [&'static str]) -> impl Strategy<Value = Edit> {
    let token = prop_oneof![
        proptest::sample::select(tokens).prop_map(str::to_owned),
        "[ -~\n\t]{0,8}",
        any::<char>().prop_map(|c| c.to_string()),
    ];
    prop_oneof![
        (0.0..1.0f64, 1usize..40).prop_map(|(p, n)| Edit::Delete(p, n)),
        (0.0..1.0f64, 1usize..80).prop_map(|(p, n)| Edit::Duplicate(p, n)),
        (0.0..1.0f64, token.clone()).prop_map(|(p, t)| Edit::Insert(p, t)),
        (0.0..1.0f64, 1usize..12, token).prop_map(|(p, n, t)| Edit::Replace(p, n, t)),
    ]
}

/// `text` with `edits` applied (on chars, so the result stays UTF-8).
fn mutate(text: &str, edits: &[Edit]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for e in edits {
        let at = |p: f64, len: usize| ((p * len as f64) as usize).min(len);
        match e {
            Edit::Delete(p, n) => {
                let i = at(*p, chars.len());
                let j = (i + n).min(chars.len());
                chars.drain(i..j);
            }
            Edit::Duplicate(p, n) => {
                let i = at(*p, chars.len());
                let j = (i + n).min(chars.len());
                let copy: Vec<char> = chars[i..j].to_vec();
                chars.splice(j..j, copy);
            }
            Edit::Insert(p, t) => {
                let i = at(*p, chars.len());
                chars.splice(i..i, t.chars());
            }
            Edit::Replace(p, n, t) => {
                let i = at(*p, chars.len());
                let j = (i + n).min(chars.len());
                chars.splice(i..j, t.chars());
            }
        }
    }
    chars.into_iter().collect()
}

/// A corpus file with up to `max_edits` edits.
fn mutated(
    corpus: Vec<String>,
    tokens: &'static [&'static str],
    max_edits: usize,
) -> impl Strategy<Value = String> {
    (
        proptest::sample::select(corpus),
        proptest::collection::vec(edit(tokens), 0..max_edits),
    )
        .prop_map(|(text, edits)| mutate(&text, &edits))
}

const LANGUAGE_TOKENS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ",",
    ":",
    "..",
    " step ",
    "for ",
    " in ",
    "if ",
    "else ",
    "while ",
    "let ",
    "fn ",
    "return",
    "kernel ",
    "param ",
    " cost ",
    "send",
    "recv",
    "isend",
    "irecv",
    "wait",
    "waitall",
    "waitany",
    "test",
    "probe",
    "sendrecv",
    "allreduce",
    "bcast",
    "alltoallv",
    "reduce_scatter",
    "comm_split",
    "comm_dup",
    "barrier()",
    "any",
    "rank",
    "size",
    "world",
    "0",
    "-1",
    "9223372036854775807",
    "-9223372036854775808",
    "1e308",
    "0.0",
    "\"",
    "//",
    "\n",
    "=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "==",
    "<",
    "&&",
    "||",
    "!",
    "abort",
    "print",
    "compute ",
    "copy",
    "malloc",
    "free",
    "bytes:",
    "to:",
    "from:",
    "tag:",
    "root:",
    "value:",
    "op:",
    "comm:",
    "color:",
    "key:",
    "len(",
    "array(",
    "sum(",
    "wtime()",
    "break",
    "continue",
    ".source",
    "null",
    "true",
];

#[test]
fn source_text() {
    let corpus = corpus("examples", &[".mpl"])
        .into_iter()
        .chain(corpus("tests", &[".mpl"]))
        .collect::<Vec<_>>();
    let texts = prop_oneof![
        4 => mutated(corpus, LANGUAGE_TOKENS, 8),
        1 => proptest::collection::vec(proptest::sample::select(LANGUAGE_TOKENS), 0..60)
            .prop_map(|t| t.concat()),
    ];
    fuzz("source_text", 300, texts, |text| {
        match frontend::compile("fuzz.mpl", &text) {
            Ok(program) => {
                // What the front end accepts, the IR's validator accepts.
                program
                    .validate()
                    .map_err(|e| TestCaseError::fail(format!("invalid IR: {e}")))?;
            }
            Err(d) => {
                let shown = d.render("fuzz.mpl", &text);
                prop_assert!(shown.contains("error"), "{shown}");
            }
        }
        Ok(())
    });
}

const TOML_TOKENS: &[&str] = &[
    "=",
    "\"",
    "[",
    "]",
    "[[network.segments]]",
    "\n",
    "us",
    " ns",
    " ms",
    " s",
    "MB/s",
    "GB/s",
    " B",
    " KiB",
    " MiB",
    "-1",
    "0",
    "1e400",
    "nan",
    "inf",
    "unlimited",
    "half",
    "full",
    "0.5",
    "latency",
    "bandwidth",
    "from",
    "gap",
    "eager_limit",
    "ranks_per_node",
    "model",
    "smp",
    "hardware",
    "plugin",
    "[shm]",
    "[node]",
    "[socket]",
    "[collectives]",
    "library",
    "mpich-4",
    "openmpi-5",
    "sockets",
    "node_gap",
    "node_bandwidth",
    "duplex",
    "mtu",
    "page_fault",
    "page_size",
    "allocator",
    "\"retain\"",
    "[network.written]",
    "[shm.written]",
    "[[shm.written.segments]]",
];

#[test]
fn machine_files() {
    let corpus = corpus("examples/machines", &[".toml"])
        .into_iter()
        .chain(corpus(
            "validation/dev-machine",
            &["machine.toml", "-fast.toml", "-slow.toml"],
        ))
        .collect::<Vec<_>>();
    fuzz(
        "machine_files",
        200,
        mutated(corpus, TOML_TOKENS, 6),
        |text| {
            match models::AnyMachine::from_toml_str(&text, "fuzz.toml", Path::new(ROOT)) {
                Ok(m) => {
                    // A machine that loads runs: a transfer between two ranks.
                    use sim_core::model::{Machine, MessageKind};
                    let mut run = m.start(4);
                    let t = run.transfer(0, 3, 1000, MessageKind::Eager, 0.0);
                    prop_assert!(t.arrival >= 0.0 && !t.arrival.is_nan(), "{t:?}");
                    // The rendezvous data of library data the sender just
                    // wrote (its channel's `written` parameters, if any).
                    let w = run.transfer_written(0, 3, 1 << 20, MessageKind::RendezvousData, 1.0);
                    prop_assert!(w.arrival >= 1.0 && w.arrival.is_finite(), "{w:?}");
                    // And a collective's temporary buffer, allocated and
                    // freed twice (the heap's thresholds move in between).
                    for _ in 0..2 {
                        let f = run.heap_alloc(1, 1 << 20, 0..1 << 20);
                        prop_assert!(f >= 0.0 && f.is_finite(), "{f}");
                        run.heap_free(1, 1 << 20);
                    }
                }
                Err(e) => {
                    prop_assert!(!e.to_string().is_empty());
                }
            }
            Ok(())
        },
    );
}

const TABLE_TOKENS: &[&str] = &[
    "#",
    "\n",
    ",",
    "\"",
    " ",
    "\t",
    "0",
    "-1",
    "1e308",
    "nan",
    "inf",
    "#bytes",
    "t[usec]",
    "t_min[usec]",
    "t_max[usec]",
    "t_avg[usec]",
    "Mbytes/sec",
    "#repetitions",
    "# Benchmarking ",
    "PingPong",
    "PingPing",
    "Allreduce",
    "# #processes = ",
    "# ( ",
    " additional processes waiting in MPI_Barrier)",
    "# OSU MPI",
    "# Size",
    "Latency (us)",
    "Bandwidth (MB/s)",
    "# [ pairs: ",
    " ]",
    "bytes,usec",
    "4194304",
    "18446744073709551616",
];

#[test]
fn benchmark_tables() {
    let corpus = corpus("validation", &[".txt", ".csv"]);
    fuzz(
        "benchmark_tables",
        300,
        mutated(corpus, TABLE_TOKENS, 6),
        |text| {
            let _ =
                calibrate::input::parse_table(&text, &calibrate::input::InputOptions::default());
            let _ = calibrate::input::imb_blocks(&text);
            let _ = calibrate::input::osu_table(&text);
            let _ = calibrate::input::csv_table(&text);
            Ok(())
        },
    );
}

const BLOCKS_TOKENS: &[&str] = &[
    "=",
    "\"",
    "[",
    "]",
    "[[kernel]]",
    "[[kernel.tuple]]",
    "\n",
    "-1",
    "0",
    "1e400",
    "nan",
    "args",
    "mean",
    "median",
    "quantiles",
    "[0.1, 0.2]",
    "[]",
    "samples",
    "name",
    "version",
];

#[test]
fn blocks_files() {
    let corpus = corpus(
        "validation/dev-machine",
        &["blocks-heat.toml", "blocks-jacobi.toml", "blocks-net.toml"],
    );
    fuzz(
        "blocks_files",
        200,
        mutated(corpus, BLOCKS_TOKENS, 6),
        |text| {
            let _ = calibrate::blocks::file::BlocksFile::parse(&text, "fuzz.toml");
            Ok(())
        },
    );
}

/// One statement pattern of a generated program; every rank runs the same
/// sequence, so the program is correct by construction.
fn snippet() -> impl Strategy<Value = String> {
    let bytes = prop_oneof![Just(0u64), 1u64..64, 64u64..70_000, Just(1u64 << 20)];
    let tag = 0i32..4;
    prop_oneof![
        bytes.clone().prop_map(|n| format!("allreduce(bytes: {n})")),
        (bytes.clone(), 0u32..9).prop_map(|(n, r)| format!("bcast(bytes: {n}, root: {r} % size)")),
        Just("barrier()".to_owned()),
        bytes.clone().prop_map(|n| format!("alltoall(bytes: {n})")),
        bytes.clone().prop_map(|n| format!("allgather(bytes: {n})")),
        (bytes.clone(), 0u32..9).prop_map(|(n, r)| format!("reduce(bytes: {n}, root: {r} % size)")),
        (bytes.clone(), tag.clone()).prop_map(|(n, t)| format!(
            "sendrecv(to: (rank + 1) % size, from: (rank + size - 1) % size, bytes: {n}, tag: {t})"
        )),
        bytes.clone().prop_map(|n| format!(
            "if rank % 2 == 0 && rank + 1 < size {{\n send(to: rank + 1, bytes: {n})\n recv(from: rank + 1, bytes: {n})\n}} else if rank % 2 == 1 {{\n recv(from: rank - 1, bytes: {n})\n send(to: rank - 1, bytes: {n})\n}}"
        )),
        (bytes.clone(), tag).prop_map(|(n, t)| format!(
            "let a = irecv(from: (rank + size - 1) % size, bytes: {n}, tag: {t})\nlet b = isend(to: (rank + 1) % size, bytes: {n}, tag: {t})\nwaitall(a, b)"
        )),
        bytes.clone().prop_map(|n| format!(
            // The barrier ends the phase: without it a wildcard receive may take
            // a message of the next phase (the fuzzer found that in an early
            // version of this generator, rightly: MPI allows it).
            "if rank == 0 {{\n for i in 1 .. size {{ recv(from: any, bytes: {n}) }}\n}} else {{\n send(to: 0, bytes: {n})\n}}\nbarrier()"
        )),
        (1u64..100_000).prop_map(|n| format!("compute work({n})")),
        (1u32..4, bytes.clone()).prop_map(|(k, n)| format!(
            "let c = comm_split(color: rank % {k})\nallreduce(bytes: {n}, comm: c)\nbarrier(comm: c)"
        )),
        Just("let v = allreduce(bytes: 8, value: rank, op: max)\nprint(\"max\", v)".to_owned()),
        Just("print(\"scan\", scan(bytes: 8, value: rank + 1))".to_owned()),
        bytes.prop_map(|n| format!("copy(bytes: {n})")),
    ]
}

fn program() -> impl Strategy<Value = String> {
    program_ending("print(\"done\", wtime())")
}

/// A generated program, then `last`.
fn program_ending(last: &'static str) -> impl Strategy<Value = String> {
    let block = || proptest::collection::vec(snippet(), 1..4);
    let item = prop_oneof![
        3 => block().prop_map(|b| b.join("\n")),
        1 => (1u32..4, block()).prop_map(|(k, b)| format!("for it in 0 .. {k} {{\n{}\n}}", b.join("\n"))),
    ];
    proptest::collection::vec(item, 1..6).prop_map(move |items| {
        format!(
            "kernel work(x) cost 1.0e-9 * x\n{}\n{last}\n",
            items.join("\n")
        )
    })
}

#[test]
fn programs() {
    let machine = models::AnyMachine::builtin_default();
    fuzz("programs", 60, (program(), 1u32..10), |(text, ranks)| {
        let program = frontend::compile("fuzz.mpl", &text)
            .map_err(|d| TestCaseError::fail(d.render("fuzz.mpl", &text)))?;
        let run = || {
            let mut lines = Vec::new();
            let cfg = sim_core::SimConfig {
                ranks,
                max_events: 50_000_000,
                ..sim_core::SimConfig::default()
            };
            let report = sim_core::simulate(&program, &mut machine.start(ranks), cfg, &mut |l| {
                lines.push(format!("{} {:e} {}", l.rank, l.time, l.text));
            });
            report.map(|r| (r.predicted_seconds.to_bits(), r.messages, r.events, lines))
        };
        let first = run().map_err(|e| TestCaseError::fail(format!("{e:?}\n{text}")))?;
        let second = run().map_err(|e| TestCaseError::fail(format!("{e:?}\n{text}")))?;
        prop_assert_eq!(&first, &second, "{}", text);
        prop_assert_eq!(first.3.len() as u32 % ranks, 0, "{}", text);
        Ok(())
    });
}

/// The `[rank] text` lines, each rank's in its order, ranks in order.
fn by_rank(mut lines: Vec<(u32, String)>) -> Vec<String> {
    lines.sort_by_key(|(r, _)| *r);
    lines
        .into_iter()
        .map(|(r, t)| format!("[{r}] {t}"))
        .collect()
}

#[test]
fn emit_c_differential() {
    if !support::requires_tools(&["mpicc", "mpirun"], "PARSIM_REQUIRE_MPI") {
        return;
    }
    let dir = support::temp_dir();
    let strategy = (program_ending("print(\"done\", rank)"), 1u32..5);
    // A real MPI program per input: few inputs, few shrinking steps.
    let n = cases_from("PARSIM_FUZZ_MPI_CASES", 4);
    fuzz_runs("emit_c_differential", n, 50, strategy, |(text, ranks)| {
        let program = frontend::compile("fuzz.mpl", &text)
            .map_err(|d| TestCaseError::fail(d.render("fuzz.mpl", &text)))?;
        let machine = models::AnyMachine::builtin_default();
        let mut lines = Vec::new();
        let cfg = sim_core::SimConfig {
            ranks,
            max_events: 50_000_000,
            ..sim_core::SimConfig::default()
        };
        sim_core::simulate(&program, &mut machine.start(ranks), cfg, &mut |l| {
            lines.push((l.rank, l.text));
        })
        .map_err(|e| TestCaseError::fail(format!("{e:?}\n{text}")))?;
        let want = by_rank(lines);
        let source = dir.join("fuzz.mpl");
        let binary = dir.join("fuzz");
        std::fs::write(&source, &text).expect("write the program");
        let (src, bin) = (
            source.to_str().expect("utf-8 path"),
            binary.to_str().expect("utf-8 path"),
        );
        let o = support::parsim(&["build-mpi", src, "-o", bin]);
        prop_assert!(
            o.status.success(),
            "build-mpi: {}\n{text}",
            support::text(&o.stderr)
        );
        let o = std::process::Command::new("timeout")
            .args(["120", "mpirun", "-np", &ranks.to_string(), bin])
            .output()
            .expect("mpirun runs");
        let stdout = support::text(&o.stdout);
        prop_assert!(
            o.status.success(),
            "mpirun -np {ranks}: {}\n{stdout}\n{text}",
            support::text(&o.stderr)
        );
        let got = by_rank(
            stdout
                .lines()
                .filter_map(|l| {
                    let (r, t) = l.strip_prefix('[')?.split_once("] ")?;
                    Some((r.parse().ok()?, t.to_owned()))
                })
                .collect(),
        );
        prop_assert_eq!(
            got,
            want,
            "mpirun -np {} vs the simulation of\n{}",
            ranks,
            text
        );
        Ok(())
    });
}
