//! The unit table of machine files: `MB` = 10^6 bytes, `MiB` = 2^20 bytes,
//! bits per second in `kbit/s`, `Mbit/s`, `Gbit/s`.

use approx::assert_relative_eq;
use models::units::{
    UnitError, format_bandwidth, format_size, format_time, parse_bandwidth, parse_size, parse_time,
};

fn ok(result: Result<f64, UnitError>, text: &str) -> f64 {
    match result {
        Ok(value) => value,
        Err(err) => panic!("{text:?} should parse: {err}"),
    }
}

#[test]
fn times() {
    let table = [
        ("2 s", 2.0),
        ("1.5 ms", 1.5e-3),
        ("30 us", 30e-6),
        ("30us", 30e-6),
        ("  30   us ", 30e-6),
        ("7 \u{b5}s", 7e-6),  // MICRO SIGN
        ("7 \u{3bc}s", 7e-6), // GREEK SMALL LETTER MU
        ("5 ns", 5e-9),
        ("1e3 ns", 1e-6),
        ("2.5E-1 s", 0.25),
        (".5 ms", 0.5e-3),
        ("0 us", 0.0),
        ("-1 us", -1e-6), // the sign is kept; range checks are the caller's
    ];
    for (text, seconds) in table {
        assert_relative_eq!(ok(parse_time(text), text), seconds, max_relative = 1e-12);
    }
}

#[test]
fn sizes_decimal_and_binary() {
    let table = [
        ("1500 B", 1500.0),
        ("1500B", 1500.0),
        ("1 KB", 1e3),
        ("1 kB", 1e3),
        ("1 KiB", 1024.0),
        ("64KiB", 65_536.0),
        ("9 KiB", 9216.0),
        ("1 MB", 1e6),
        ("1 MiB", 1_048_576.0),
        ("1 GB", 1e9),
        ("1 GiB", 1_073_741_824.0),
        ("1.5 KiB", 1536.0),
    ];
    for (text, bytes) in table {
        assert_relative_eq!(ok(parse_size(text), text), bytes, max_relative = 1e-12);
    }
}

#[test]
fn bandwidths_bytes_and_bits() {
    let table = [
        ("1 B/s", 1.0),
        ("10 KB/s", 1e4),
        ("200 MB/s", 2e8),
        ("200MB/s", 2e8),
        ("1 GB/s", 1e9),
        ("1 KiB/s", 1024.0),
        ("1 MiB/s", 1_048_576.0),
        ("1 GiB/s", 1_073_741_824.0),
        ("8 bit/s", 1.0),
        ("8 kbit/s", 1e3),
        ("100 Mbit/s", 12.5e6),
        ("200 Gbit/s", 25e9),
    ];
    for (text, rate) in table {
        assert_relative_eq!(ok(parse_bandwidth(text), text), rate, max_relative = 1e-12);
    }
}

#[test]
fn refused_quantities() {
    assert_eq!(
        parse_time("30 parsec"),
        Err(UnitError::UnknownUnit("parsec".into()))
    );
    assert_eq!(parse_time("30"), Err(UnitError::MissingUnit));
    assert_eq!(parse_time("us"), Err(UnitError::NoNumber));
    assert_eq!(parse_time(""), Err(UnitError::NoNumber));
    assert_eq!(parse_time("inf s"), Err(UnitError::NoNumber));
    assert_eq!(parse_time("NaN s"), Err(UnitError::NoNumber));
    assert_eq!(parse_time("1e999 s"), Err(UnitError::NotFinite));
    assert_eq!(
        parse_time("30 US"),
        Err(UnitError::UnknownUnit("US".into()))
    );
    // A size is not a time, nor a bandwidth a size.
    assert_eq!(
        parse_time("30 MB"),
        Err(UnitError::UnknownUnit("MB".into()))
    );
    assert_eq!(
        parse_size("1 MB/s"),
        Err(UnitError::UnknownUnit("MB/s".into()))
    );
    assert_eq!(
        parse_bandwidth("200 MB"),
        Err(UnitError::UnknownUnit("MB".into()))
    );
    assert_eq!(
        parse_size("1 KIB"),
        Err(UnitError::UnknownUnit("KIB".into()))
    );
    // Bits or bytes? Refused.
    assert_eq!(
        parse_bandwidth("200 Mb/s"),
        Err(UnitError::AmbiguousBits("Mb/s".into(), "M".into()))
    );
    assert_eq!(
        parse_bandwidth("1 Gb/s"),
        Err(UnitError::AmbiguousBits("Gb/s".into(), "G".into()))
    );
}

#[test]
fn formatting() {
    assert_eq!(format_time(30e-6), "30 \u{b5}s");
    assert_eq!(format_time(0.6e-6), "600 ns");
    assert_eq!(format_time(1.5e-3), "1.5 ms");
    assert_eq!(format_time(0.0), "0 s");
    assert_eq!(format_time(1.0 / 24e9), "41.6667 ps");
    assert_eq!(format_bandwidth(2e8), "200 MB/s");
    assert_eq!(format_bandwidth(24e9), "24 GB/s");
    assert_eq!(format_size(65_536), "64 KiB");
    assert_eq!(format_size(9216), "9 KiB");
    assert_eq!(format_size(1500), "1500 B");
    assert_eq!(format_size(0), "0 B");
}
