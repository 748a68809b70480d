//! The parsim skeleton language: lexer, parser, semantic checks,
//! diagnostics and lowering to the basic-block IR of [`sim_core::ir`].
//!
//! ```
//! let src = "param n = 4\nfor i in 0 .. n { send(to: (rank + 1) % size, bytes: 8) }\n";
//! let program = frontend::compile("ring.mpl", src).expect("a valid program");
//! assert_eq!(program.params[0].name, "n");
//! ```

mod ast;
mod diag;
mod lexer;
mod lower;
mod overrides;
mod parser;
mod span;

pub use diag::{Diagnostic, Diagnostics};
pub use overrides::{OverrideError, apply_param_overrides};
pub use parser::{MAX_EXPR_NODES, MAX_NESTING};

use sim_core::ir::Program;

/// At most this many diagnostics are returned.
pub const MAX_REPORTED: usize = 50;

/// Parses, checks and lowers one source file.
///
/// On failure, every error found is returned (syntax errors if there are any,
/// otherwise the semantic ones), in source order; render them with
/// [`Diagnostics::render`].
pub fn compile(file_name: &str, source: &str) -> Result<Program, Diagnostics> {
    let index = span::LineIndex::new(source);
    let mut errors = Vec::new();
    let tokens = lexer::lex(source, &index, &mut errors);
    let module = parser::parse(&tokens, &mut errors);
    if errors.is_empty() {
        let program = lower::lower(&module, file_name, &mut errors);
        if errors.is_empty() {
            return Ok(program);
        }
    }
    errors.sort_by_key(|d| (d.span.start, d.span.end));
    if errors.len() > MAX_REPORTED {
        let dropped = errors.len() - MAX_REPORTED;
        errors.truncate(MAX_REPORTED);
        if let Some(last) = errors.last_mut() {
            last.notes.push(format!(
                "note: {dropped} more {} not shown",
                if dropped == 1 { "error" } else { "errors" }
            ));
        }
    }
    Err(Diagnostics {
        diagnostics: errors,
    })
}
