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
    /// The model plugin's library cannot be loaded (`plugin.library`).
    #[error("{file}: cannot load the model plugin `{library}`: {message}")]
    PluginLoad {
        /// The machine file.
        file: String,
        /// The library, as resolved.
        library: String,
        /// The system's message.
        message: String,
    },
    /// The model plugin implements another version of the C ABI.
    #[error(
        "{file}: the model plugin `{library}` implements parsim model ABI version {found}, \
         but this parsim needs version {expected}; rebuild the plugin against parsim_model.h \
         of ABI version {expected}"
    )]
    PluginAbi {
        /// The machine file.
        file: String,
        /// The library, as resolved.
        library: String,
        /// The version the library reports.
        found: u32,
        /// The version parsim implements.
        expected: u32,
    },
    /// The model plugin lacks a function of the C ABI.
    #[error(
        "{file}: the model plugin `{library}` does not export `{symbol}`, a function of \
         parsim model ABI version {version} (see parsim_model.h)"
    )]
    PluginSymbol {
        /// The machine file.
        file: String,
        /// The library, as resolved.
        library: String,
        /// The missing symbol.
        symbol: String,
        /// The ABI version whose function it is.
        version: u32,
    },
    /// `parsim_model_create` refused the parameters (`plugin.params`).
    #[error("{file}: the model plugin `{library}` refused its parameters: {message}")]
    PluginCreate {
        /// The machine file.
        file: String,
        /// The library, as resolved.
        library: String,
        /// The plugin's message.
        message: String,
    },
}

impl MachineError {
    /// The full key path the error is about, if any.
    /// For the plugin errors: `plugin.library`, or `plugin.params` when the
    /// plugin refused its parameters.
    pub fn key(&self) -> Option<&str> {
        match self {
            MachineError::Io { .. } | MachineError::Syntax { .. } => None,
            MachineError::UnknownKey { key, .. }
            | MachineError::MissingKey { key, .. }
            | MachineError::BadValue { key, .. }
            | MachineError::OutOfRange { key, .. }
            | MachineError::Conflict { key, .. } => Some(key),
            MachineError::PluginLoad { .. }
            | MachineError::PluginAbi { .. }
            | MachineError::PluginSymbol { .. } => Some("plugin.library"),
            MachineError::PluginCreate { .. } => Some("plugin.params"),
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
            | MachineError::Conflict { file, .. }
            | MachineError::PluginLoad { file, .. }
            | MachineError::PluginAbi { file, .. }
            | MachineError::PluginSymbol { file, .. }
            | MachineError::PluginCreate { file, .. } => file,
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
