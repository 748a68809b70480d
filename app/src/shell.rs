//! Command lines: quoting words for a POSIX shell (shlex) and running a
//! user's launcher line with `sh -c`.

use crate::Error;

/// `word` quoted for a POSIX shell when it needs it. Words of letters,
/// digits and `-_./=:,+%@` stay as they are (shlex would also quote `=`,
/// which a command line reads better without: `--param n=1002`).
pub fn word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+%@".contains(c));
    if plain {
        return word.to_owned();
    }
    match shlex::try_quote(word) {
        Ok(q) => q.into_owned(),
        // A NUL byte cannot be passed to a shell at all; quote it as text
        // so that the line still shows what was given.
        Err(_) => format!("'{}'", word.replace('\'', r"'\''")),
    }
}

/// Runs a command line with `sh -c`; its stdout, or an error with both
/// outputs when it fails.
pub fn run(line: &str) -> Result<String, Error> {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(line)
        .output()
        .map_err(|e| Error::Tool(format!("cannot run `{line}`: {e}")))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        return Err(Error::Tool(format!(
            "`{line}` failed ({}):\n{}{}",
            out.status,
            stdout,
            String::from_utf8_lossy(&out.stderr).trim_end()
        )));
    }
    Ok(stdout)
}

#[cfg(test)]
mod tests {
    use super::{run, word};

    #[test]
    fn words_are_quoted_for_the_shell() {
        assert_eq!(word("--memcpy"), "--memcpy");
        assert_eq!(word("examples/heat.mpl"), "examples/heat.mpl");
        assert_eq!(word("n=1002"), "n=1002");
        assert_eq!(word("300 MB/s"), "'300 MB/s'");
        // Whatever the quoting, the shell reads the word back as it was.
        for w in ["it's", "a b'c", "$HOME", ""] {
            let echoed = run(&format!("printf %s {}", word(w))).expect("sh runs");
            assert_eq!(echoed, w);
        }
    }

    #[test]
    fn a_failing_line_shows_its_output() {
        let e = run("echo out; echo err >&2; exit 3").expect_err("fails");
        let m = e.to_string();
        assert!(
            m.contains("exit status: 3") && m.contains("out\nerr"),
            "{m}"
        );
    }
}
