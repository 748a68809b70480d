//! The frontend never panics and never hangs, whatever the input: every
//! prefix of the example programs, random bytes, random token soup, random
//! edits of valid programs and pathological nesting. Successful compiles
//! must uphold the IR invariants; failures must render.

use std::fs;
use std::path::Path;

mod common;

fn golden(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    fs::read_to_string(path).expect("golden program is readable")
}

fn valid_programs() -> Vec<String> {
    [
        "heat.mpl",
        "pingpong.mpl",
        "functions.mpl",
        "nonblocking.mpl",
        "collectives.mpl",
        "p2p.mpl",
        "arrays.mpl",
    ]
    .iter()
    .map(|n| golden(n))
    .collect()
}

/// Compiles `src` and exercises every output path.
fn exercise(src: &str) {
    match frontend::compile("fuzz.mpl", src) {
        Ok(program) => {
            common::check_invariants(&program);
            let dot = sim_core::dot::to_dot(&program);
            assert!(dot.starts_with("digraph"));
        }
        Err(diags) => {
            assert!(!diags.is_empty());
            let text = diags.render("fuzz.mpl", src);
            assert!(text.starts_with("error: "), "{text}");
            let _ = diags.to_string();
        }
    }
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % (n as u64)).unwrap_or(0)
    }
}

#[test]
fn every_prefix_of_the_examples() {
    for src in valid_programs() {
        for (i, _) in src.char_indices() {
            exercise(&src[..i]);
        }
        exercise(&src);
    }
}

#[test]
fn random_bytes() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..3000 {
        let len = rng.below(200);
        let bytes: Vec<u8> = (0..len).map(|_| (rng.next() & 0xff) as u8).collect();
        exercise(&String::from_utf8_lossy(&bytes));
        // Printable ASCII is likelier to get past the lexer.
        let text: String = (0..len)
            .map(|_| char::from(b' ' + (rng.below(95) as u8)))
            .collect();
        exercise(&text);
    }
}

#[test]
fn random_token_soup() {
    const TOKENS: &[&str] = &[
        "param",
        "kernel",
        "cost",
        "fn",
        "let",
        "if",
        "else",
        "for",
        "in",
        "step",
        "while",
        "break",
        "continue",
        "return",
        "compute",
        "true",
        "false",
        "null",
        "any",
        "rank",
        "size",
        "x",
        "n",
        "f",
        "send",
        "recv",
        "isend",
        "irecv",
        "sendrecv",
        "wait",
        "waitall",
        "world",
        "ssend",
        "ibsend",
        "waitany",
        "test",
        "probe",
        "iprobe",
        "bcast",
        "allreduce",
        "gatherv",
        "barrier",
        "comm_split",
        "comm_dup",
        "rank_in",
        "size_in",
        "array",
        "len",
        "sum",
        "root:",
        "comm:",
        "color:",
        "key:",
        "[",
        "]",
        "[]",
        "a[0]",
        "print",
        "copy",
        "malloc",
        "free",
        "wtime",
        "min",
        "sqrt",
        "to:",
        "from:",
        "bytes:",
        "tag:",
        "recv_bytes:",
        "(",
        ")",
        "{",
        "}",
        ",",
        ";",
        ":",
        ".",
        "..",
        "+",
        "-",
        "*",
        "/",
        "%",
        "!",
        "=",
        "+=",
        "==",
        "!=",
        "<",
        "<=",
        ">",
        "&&",
        "||",
        "\n",
        "1",
        "2.5",
        "1e-6",
        "\"s\"",
        ".source",
        ".tag",
        "// c\n",
        "/*",
        "*/",
        "9999999999999999999999",
    ];
    let mut rng = Rng(42);
    for _ in 0..5000 {
        let len = rng.below(40);
        let mut src = String::new();
        for _ in 0..len {
            src.push_str(TOKENS[rng.below(TOKENS.len())]);
            src.push(' ');
        }
        exercise(&src);
    }
}

#[test]
fn random_edits_of_valid_programs() {
    let programs = valid_programs();
    let mut rng = Rng(7);
    for _ in 0..3000 {
        let mut chars: Vec<char> = programs[rng.below(programs.len())].chars().collect();
        for _ in 0..=rng.below(3) {
            let at = rng.below(chars.len() + 1);
            match rng.below(3) {
                0 if at < chars.len() => {
                    chars.remove(at);
                }
                1 => chars.insert(
                    at,
                    "(){},;:.=+-*<>!&|\"/\nx0 []"[rng.below(26)..]
                        .chars()
                        .next()
                        .unwrap_or('x'),
                ),
                _ if at < chars.len() => {
                    let other = rng.below(chars.len());
                    chars.swap(at, other);
                }
                _ => {}
            }
        }
        exercise(&chars.into_iter().collect::<String>());
    }
}

#[test]
fn pathological_nesting_and_length() {
    let n = 50_000;
    let cases = [
        format!("let x = {}1{}", "(".repeat(n), ")".repeat(n)),
        format!("let x = {}1", "(".repeat(n)),
        format!("let x = 1{}", " + 1".repeat(n)),
        format!("let x = 1{}", " && f(1)".repeat(n)),
        format!("let x = {}1", "-".repeat(n)),
        format!("let x = {}1", "!".repeat(n)),
        format!("{}{}", "if x {".repeat(n), "}".repeat(n)),
        "while true {".repeat(n),
        "}".repeat(n),
        format!("fn f() {{ {} }}", "f()\n".repeat(n / 10)),
        format!("print({})", "1, ".repeat(n)),
        "let s = recv(from: any, bytes: 8)".to_string() + &".source".repeat(n),
        "/*".repeat(n),
        format!("let x = [{}]", "1, ".repeat(n)),
        format!("let x = {}1{}", "[".repeat(n), "]".repeat(n)),
        format!("let x = a{}", "[0]".repeat(n)),
        format!("a{} = 1", "[0]".repeat(n)),
        format!("let a = [[0]]\na{} += 1", "[0]".repeat(200)),
        format!("let x = {}", "[".repeat(n)),
        format!("bcast({})", "bytes: 1, ".repeat(n)),
        "\"".repeat(n),
    ];
    // No wall-clock bound here (timed tests flake on a loaded CI machine);
    // a quadratic pass would show as this test taking minutes.
    for src in &cases {
        exercise(src);
    }
}
