//! Dates for the files parsim writes (machine-file headers, blocks files,
//! Paraver traces): now in UTC, or `SOURCE_DATE_EPOCH` for reproducible
//! output.

/// Today's date (UTC), or that of `SOURCE_DATE_EPOCH` for reproducible
/// output, as YYYY-MM-DD.
pub fn today() -> String {
    let (y, m, d) = civil_from_days(unix_now().div_euclid(86_400));
    format!("{y:04}-{m:02}-{d:02}")
}

/// Now (or `SOURCE_DATE_EPOCH`), UTC, as ISO 8601 `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc_timestamp() -> String {
    let t = unix_now();
    let (y, m, d) = civil_from_days(t.div_euclid(86_400));
    let s = t.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// Now (or `SOURCE_DATE_EPOCH`), UTC, as Paraver's header writes it:
/// `dd/mm/yyyy at hh:mm`.
pub fn paraver_date() -> String {
    let t = unix_now();
    let (y, m, d) = civil_from_days(t.div_euclid(86_400));
    let s = t.rem_euclid(86_400);
    format!("{d:02}/{m:02}/{y:04} at {:02}:{:02}", s / 3600, s / 60 % 60)
}

fn unix_now() -> i64 {
    std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0))
        })
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian
/// (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms",
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    // `day` is in 1..=31 and `month` in 1..=12 by construction.
    (year, month as u32, day as u32)
}

#[cfg(test)]
mod tests {
    use super::civil_from_days;

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }
}
