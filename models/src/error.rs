//! Errors of machine descriptions. Every one names the file and, where there
//! is one, the full key path (`network.latency`).

use thiserror::Error;

/// A machine description that cannot be used.
#[derive(Debug, Error)]
pub enum MachineError {
    /// The file cannot be read.
    #[error("{file}: cannot read the machine file: {source}")]
    Io {
        /// The file.
        file: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The text is not TOML.
    #[error("{file}: not a valid TOML file: {message}")]
    Syntax {
        /// The file.
        file: String,
        /// The TOML parser's message (with line and column).
        message: String,
    },
    /// A key the format does not have.
    #[error("{file}: unknown key `{key}`{}", did_you_mean(.suggestion.as_deref()))]
    UnknownKey {
        /// The file.
        file: String,
        /// Full path of the key.
        key: String,
        /// The closest known key of the same table, if any is close.
        suggestion: Option<String>,
    },
    /// A required key is absent.
    #[error("{file}: missing required key `{key}`{}", parenthesised(.hint.as_deref()))]
    MissingKey {
        /// The file.
        file: String,
        /// Full path of the key.
        key: String,
        /// What to write, when there is something to add.
        hint: Option<String>,
    },
    /// A value of the wrong type or with a bad unit.
    #[error("{file}: key `{key}`: expected {expected}, got {got}{}", parenthesised(.hint.as_deref()))]
    BadValue {
        /// The file.
        file: String,
        /// Full path of the key.
        key: String,
        /// What the key takes, with an example.
        expected: String,
        /// The value as written.
        got: String,
        /// Why it was refused, when the unit is the problem.
        hint: Option<String>,
    },
    /// A well-formed value outside the key's range.
    #[error("{file}: key `{key}`: {reason}")]
    OutOfRange {
        /// The file.
        file: String,
        /// Full path of the key.
        key: String,
        /// The range and the value.
        reason: String,
    },
    /// Two keys that exclude each other are both given.
    #[error("{file}: keys `{key}` and `{other}` are alternatives; give exactly one")]
    Conflict {
        /// The file.
        file: String,
        /// Full path of one key.
        key: String,
        /// Full path of the other.
        other: String,
    },
}

impl MachineError {
    /// The full key path the error is about, if any.
    pub fn key(&self) -> Option<&str> {
        match self {
            MachineError::Io { .. } | MachineError::Syntax { .. } => None,
            MachineError::UnknownKey { key, .. }
            | MachineError::MissingKey { key, .. }
            | MachineError::BadValue { key, .. }
            | MachineError::OutOfRange { key, .. }
            | MachineError::Conflict { key, .. } => Some(key),
        }
    }

    /// The file the error is about.
    pub fn file(&self) -> &str {
        match self {
            MachineError::Io { file, .. }
            | MachineError::Syntax { file, .. }
            | MachineError::UnknownKey { file, .. }
            | MachineError::MissingKey { file, .. }
            | MachineError::BadValue { file, .. }
            | MachineError::OutOfRange { file, .. }
            | MachineError::Conflict { file, .. } => file,
        }
    }
}

fn did_you_mean(suggestion: Option<&str>) -> String {
    suggestion
        .map(|key| format!(" (did you mean `{key}`?)"))
        .unwrap_or_default()
}

fn parenthesised(hint: Option<&str>) -> String {
    hint.map(|hint| format!(" ({hint})")).unwrap_or_default()
}
