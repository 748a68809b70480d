//! Quantities with units written out, as machine files spell them.
//!
//! A quantity is a number followed by a unit, with an optional space between
//! them: `"30 us"`, `"30us"`, `"1.5e3 B"`. The number may be an integer or a
//! float (with an optional exponent); it must be finite.
//!
//! | kind      | units                                                                      |
//! |-----------|----------------------------------------------------------------------------|
//! | time      | `s`, `ms`, `us` (also `µs`), `ns`                                          |
//! | size      | `B`; decimal `KB` (also `kB`) = 10^3, `MB` = 10^6, `GB` = 10^9 bytes;      |
//! |           | binary `KiB` = 2^10, `MiB` = 2^20, `GiB` = 2^30 bytes                      |
//! | bandwidth | any size unit per second (`B/s`, `KB/s`, `MB/s`, `GB/s`, `KiB/s`, `MiB/s`, `GiB/s`); |
//! |           | bits per second `kbit/s` = 10^3, `Mbit/s` = 10^6, `Gbit/s` = 10^9 bits/s  |
//!
//! So `MB` is 10^6 bytes and `MiB` is 2^20 = 1,048,576 bytes, as in IEC 80000-13
//! (SI prefixes are powers of ten, the binary prefixes Ki/Mi/Gi powers of two).
//! `Mb/s` and `Gb/s` are refused: the ParJava paper writes "Mb/sec" for what
//! its networks show to be megabytes, while networking custom reads it as
//! megabits; a machine file has to say which.

use thiserror::Error;

/// Why a quantity could not be read. The caller adds the key and the file.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UnitError {
    /// No number at the start of the text.
    #[error("no number at the start")]
    NoNumber,
    /// A number without a unit.
    #[error("the unit is missing")]
    MissingUnit,
    /// A unit this kind of quantity does not know.
    #[error("unknown unit `{0}`")]
    UnknownUnit(String),
    /// `Mb/s` or `Gb/s`: bits or bytes?
    #[error("`{0}` is ambiguous: write `{1}B/s` for bytes or `{1}bit/s` for bits per second")]
    AmbiguousBits(String, String),
    /// The number overflows to infinity.
    #[error("the number is too large")]
    NotFinite,
}

const TIME_UNITS: &[(&str, f64)] = &[
    ("s", 1.0),
    ("ms", 1e-3),
    ("us", 1e-6),
    ("\u{b5}s", 1e-6),  // MICRO SIGN
    ("\u{3bc}s", 1e-6), // GREEK SMALL LETTER MU
    ("ns", 1e-9),
];

const KIB: f64 = 1024.0;
const SIZE_UNITS: &[(&str, f64)] = &[
    ("B", 1.0),
    ("KB", 1e3),
    ("kB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("KiB", KIB),
    ("MiB", KIB * KIB),
    ("GiB", KIB * KIB * KIB),
];

const BIT_RATE_UNITS: &[(&str, f64)] = &[
    ("bit/s", 1.0 / 8.0),
    ("kbit/s", 1e3 / 8.0),
    ("Kbit/s", 1e3 / 8.0),
    ("Mbit/s", 1e6 / 8.0),
    ("Gbit/s", 1e9 / 8.0),
];

/// Splits `text` into its leading number and the (trimmed) unit after it.
fn split_number(text: &str) -> Result<(f64, &str), UnitError> {
    let text = text.trim();
    let bytes = text.as_bytes();
    let mut end = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        end += 1;
    }
    let digits_start = end;
    while bytes.get(end).is_some_and(u8::is_ascii_digit) {
        end += 1;
    }
    let mut digits = end - digits_start;
    if bytes.get(end) == Some(&b'.') {
        end += 1;
        let frac_start = end;
        while bytes.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
        digits += end - frac_start;
    }
    if digits == 0 {
        return Err(UnitError::NoNumber);
    }
    // An exponent only when `e`/`E` is followed by digits, so that "1 EB"
    // style units are never eaten as exponents.
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let mut exp_end = end + 1;
        if matches!(bytes.get(exp_end), Some(b'+' | b'-')) {
            exp_end += 1;
        }
        let exp_digits_start = exp_end;
        while bytes.get(exp_end).is_some_and(u8::is_ascii_digit) {
            exp_end += 1;
        }
        if exp_end > exp_digits_start {
            end = exp_end;
        }
    }
    // `end` sits on an ASCII boundary, so both slices are valid UTF-8.
    let (number, unit) = text.split_at(end);
    let value: f64 = number.parse().map_err(|_| UnitError::NoNumber)?;
    if !value.is_finite() {
        return Err(UnitError::NotFinite);
    }
    Ok((value, unit.trim()))
}

fn lookup(unit: &str, table: &[(&str, f64)]) -> Option<f64> {
    table
        .iter()
        .find(|(name, _)| *name == unit)
        .map(|&(_, factor)| factor)
}

fn scaled(value: f64, factor: f64) -> Result<f64, UnitError> {
    let scaled = value * factor;
    if scaled.is_finite() {
        Ok(scaled)
    } else {
        Err(UnitError::NotFinite)
    }
}

/// Parses a time (`"30 us"`) into seconds. The sign is kept; range checks
/// are the caller's.
pub fn parse_time(text: &str) -> Result<f64, UnitError> {
    let (value, unit) = split_number(text)?;
    if unit.is_empty() {
        return Err(UnitError::MissingUnit);
    }
    let factor = lookup(unit, TIME_UNITS).ok_or_else(|| UnitError::UnknownUnit(unit.into()))?;
    scaled(value, factor)
}

/// Parses a size (`"9 KiB"`) into bytes (not necessarily whole; the caller
/// checks).
pub fn parse_size(text: &str) -> Result<f64, UnitError> {
    let (value, unit) = split_number(text)?;
    if unit.is_empty() {
        return Err(UnitError::MissingUnit);
    }
    let factor = lookup(unit, SIZE_UNITS).ok_or_else(|| UnitError::UnknownUnit(unit.into()))?;
    scaled(value, factor)
}

/// Parses a bandwidth (`"200 MB/s"`, `"100 Gbit/s"`) into bytes per second.
pub fn parse_bandwidth(text: &str) -> Result<f64, UnitError> {
    let (value, unit) = split_number(text)?;
    if unit.is_empty() {
        return Err(UnitError::MissingUnit);
    }
    if let Some(factor) = lookup(unit, BIT_RATE_UNITS) {
        return scaled(value, factor);
    }
    if let Some(prefix @ ("k" | "K" | "M" | "G")) = unit.strip_suffix("b/s") {
        return Err(UnitError::AmbiguousBits(unit.into(), prefix.into()));
    }
    let size_factor = unit
        .strip_suffix("/s")
        .and_then(|size_unit| lookup(size_unit, SIZE_UNITS))
        .ok_or_else(|| UnitError::UnknownUnit(unit.into()))?;
    scaled(value, size_factor)
}

/// Formats seconds with the largest unit that keeps the number at least 1
/// (`3e-5` → `"30 µs"`), for summaries.
pub fn format_time(seconds: f64) -> String {
    let abs = seconds.abs();
    let (factor, unit) = if abs == 0.0 || abs >= 1.0 {
        (1.0, "s")
    } else if abs >= 1e-3 {
        (1e3, "ms")
    } else if abs >= 1e-6 {
        (1e6, "\u{b5}s")
    } else if abs >= 1e-9 {
        (1e9, "ns")
    } else {
        (1e12, "ps")
    };
    format!("{} {unit}", format_number(seconds * factor))
}

/// Formats bytes per second in decimal units (`2e8` → `"200 MB/s"`).
pub fn format_bandwidth(bytes_per_second: f64) -> String {
    let abs = bytes_per_second.abs();
    let (factor, unit) = if abs >= 1e9 {
        (1e-9, "GB/s")
    } else if abs >= 1e6 {
        (1e-6, "MB/s")
    } else if abs >= 1e3 {
        (1e-3, "KB/s")
    } else {
        (1.0, "B/s")
    };
    format!("{} {unit}", format_number(bytes_per_second * factor))
}

/// Formats a byte count exactly, in the largest binary unit that divides it
/// (`65536` → `"64 KiB"`, `1500` → `"1500 B"`).
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (factor, unit) in UNITS {
        // `/ *` rather than `is_multiple_of`, which is newer than the MSRV.
        if bytes >= factor && bytes / factor * factor == bytes {
            return format!("{} {unit}", bytes / factor);
        }
    }
    format!("{bytes} B")
}

/// Up to four decimals, trailing zeros dropped.
fn format_number(x: f64) -> String {
    let text = format!("{x:.4}");
    let trimmed = text.trim_end_matches('0').trim_end_matches('.');
    if trimmed == "-0" {
        "0".into()
    } else {
        trimmed.into()
    }
}
