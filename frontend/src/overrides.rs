//! `--param name=value` overrides of a program's param defaults.

use sim_core::ir::{Constant, Expr, Program};

use crate::diag::suggest;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OverrideError {
    #[error("unknown param `{name}`{}", hint(suggestion.as_deref(), known))]
    UnknownParam {
        name: String,
        /// The closest declared param name, if one is close.
        suggestion: Option<String>,
        /// Every declared param, in declaration order.
        known: Vec<String>,
    },
    #[error("param `{name}` must be a number or the name of an earlier param, got `{value}`")]
    NotANumber { name: String, value: String },
    #[error(
        "param `{name}`: `{value}` is declared after `{name}`; an override may only name a param declared before it"
    )]
    NamesLaterParam { name: String, value: String },
    #[error(
        "param `{name}`: `{value}` is outside the integers (-9223372036854775808 to 9223372036854775807); write it as a float (e.g. 1e20) if that is meant"
    )]
    IntegerOutOfRange { name: String, value: String },
}

fn hint(suggestion: Option<&str>, known: &[String]) -> String {
    match suggestion {
        Some(s) => format!("; did you mean `{s}`?"),
        None if known.is_empty() => "; the program declares no params".to_string(),
        None => format!(
            "; the program declares {}",
            known
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Replaces the defaults of the named params. A value that parses as an
/// `i64` becomes an integer constant; an integer literal outside `i64` is
/// an error; otherwise one that parses as a finite `f64` becomes a float
/// constant; the name of a param declared before this one becomes that
/// param's value (`--param class=A` with `param A = 2` declared first: a
/// symbolic choice such as NPB's problem class); anything else is an
/// error. Overrides are
/// applied in order (a later one for the same name wins); on error the
/// program may have been partly updated.
pub fn apply_param_overrides(
    program: &mut Program,
    overrides: &[(String, String)],
) -> Result<(), OverrideError> {
    for (name, value) in overrides {
        let Some(index) = program.params.iter().position(|p| &p.name == name) else {
            let known: Vec<String> = program.params.iter().map(|p| p.name.clone()).collect();
            return Err(OverrideError::UnknownParam {
                name: name.clone(),
                suggestion: suggest(name, known.iter().map(String::as_str)),
                known,
            });
        };
        let text = value.trim();
        if let Some(earlier) = program.params.iter().position(|p| p.name == text) {
            if earlier >= index {
                return Err(OverrideError::NamesLaterParam {
                    name: name.clone(),
                    value: value.clone(),
                });
            }
            // Invariant: `earlier < index <= u32::MAX` (params are indexed by u32 in the IR).
            program.params[index].default = Expr::Param(earlier as u32);
            continue;
        }
        let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
        let constant = if let Ok(v) = text.parse::<i64>() {
            Constant::Int(v)
        } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            // An integer literal that i64 cannot hold: as a float it would
            // silently lose digits (and a size of 8e20 bytes runs away).
            return Err(OverrideError::IntegerOutOfRange {
                name: name.clone(),
                value: value.clone(),
            });
        } else {
            match text.parse::<f64>() {
                // Rust also accepts "inf" and "NaN"; those are not numbers here.
                Ok(v) if v.is_finite() && text.bytes().any(|b| b.is_ascii_digit()) => {
                    Constant::Float(v)
                }
                _ => {
                    return Err(OverrideError::NotANumber {
                        name: name.clone(),
                        value: value.clone(),
                    });
                }
            }
        };
        program.params[index].default = Expr::Const(constant);
    }
    Ok(())
}
