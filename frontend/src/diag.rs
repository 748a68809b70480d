//! Diagnostics: what went wrong, where, and what was expected; rendered
//! with `codespan-reporting` as plain text (no colors).

use std::fmt;

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, Chars, Config};
use sim_core::ir::Span;

/// One error in a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The headline, lowercase, e.g. "unknown variable `x`".
    pub message: String,
    /// Where the error is.
    pub span: Span,
    /// Text shown under the primary span (e.g. "expected `)`").
    pub label: Option<String>,
    /// Other places that explain the error.
    pub secondary: Vec<(Span, String)>,
    /// Notes and help lines shown after the source excerpt.
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn new(message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            message: message.into(),
            span,
            label: None,
            secondary: Vec::new(),
            notes: Vec::new(),
        }
    }

    #[must_use]
    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = Some(label.into());
        self
    }

    #[must_use]
    pub fn with_secondary(mut self, span: Span, label: impl Into<String>) -> Diagnostic {
        self.secondary.push((span, label.into()));
        self
    }

    #[must_use]
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }
}

/// All errors found in one source file, in source order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics {
    pub diagnostics: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn is_empty(&self) -> bool {
        self.diagnostics.is_empty()
    }

    pub fn len(&self) -> usize {
        self.diagnostics.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter()
    }

    /// Renders every diagnostic, rustc-style:
    ///
    /// ```text
    /// error: unknown variable `nn`
    ///   --> heat.mpl:7:20
    ///   |
    /// 7 |     compute stencil(nn, n)
    ///   |                     ^^ not declared
    ///   |
    ///   = help: did you mean `n`?
    /// ```
    pub fn render(&self, file_name: &str, source: &str) -> String {
        let file = SimpleFile::new(file_name, source);
        let config = Config {
            chars: Chars::ascii(),
            ..Config::default()
        };
        let len = source.len();
        let range = |span: Span| {
            // Clamp to the source and to character boundaries so that a
            // span from another source can never make the renderer fail.
            let mut start = (span.start as usize).min(len);
            while !source.is_char_boundary(start) {
                start -= 1;
            }
            let mut end = (span.end as usize).clamp(start, len);
            while !source.is_char_boundary(end) {
                end += 1;
            }
            start..end
        };
        let mut out = String::new();
        for d in &self.diagnostics {
            let mut primary = Label::primary((), range(d.span));
            if let Some(label) = &d.label {
                primary = primary.with_message(label);
            }
            let mut labels = vec![primary];
            labels.extend(
                d.secondary
                    .iter()
                    .map(|(span, msg)| Label::secondary((), range(*span)).with_message(msg)),
            );
            let cs = CsDiagnostic::error()
                .with_message(&d.message)
                .with_labels(labels)
                .with_notes(d.notes.clone());
            match term::emit_into_string(&config, &file, &cs) {
                Ok(text) => out.push_str(&text),
                Err(_) => {
                    // Only reachable with a span outside `source`, which the
                    // clamping above prevents; fall back to a plain line.
                    out.push_str(&format!(
                        "error: {}\n  --> {}:{}:{}\n\n",
                        d.message, file_name, d.span.line, d.span.col
                    ));
                }
            }
        }
        let n = self.diagnostics.len();
        if n > 1 {
            out.push_str(&format!(
                "error: could not compile `{file_name}` due to {n} errors\n"
            ));
        }
        out
    }
}

impl fmt::Display for Diagnostics {
    /// One line per diagnostic, `line:col: message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}:{}: {}", d.span.line, d.span.col, d.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

/// The edit distance between two short strings, counting a swap of two
/// neighbouring characters as one edit (optimal string alignment).
fn edit_distance(a: &str, b: &str) -> usize {
    strsim::osa_distance(a, b)
}

/// The candidate closest to `name`, if it is close enough to be a likely typo.
pub fn suggest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != name)
        .map(|c| {
            let d = if c.eq_ignore_ascii_case(name) {
                0
            } else {
                edit_distance(name, c)
            };
            (d, c)
        })
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, c)| (d, c.to_string()))
        .map(|(_, c)| c.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("form", "from"), 1);
        assert_eq!(
            suggest("form", ["from", "bytes", "tag"]).as_deref(),
            Some("from")
        );
        assert_eq!(suggest("nn", ["n", "iters"]).as_deref(), Some("n"));
        assert_eq!(
            suggest("stencl", ["stencil", "x"]).as_deref(),
            Some("stencil")
        );
        assert_eq!(suggest("zzz", ["n", "iters"]), None);
    }
}
