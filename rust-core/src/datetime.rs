//! Kinds `date` and `timestamp` (docs/spec.md sections 3 and 3.2): strict whole-string
//! matching with ASCII digits only, in the proleptic Gregorian calendar.

/// A calendar date that exists, years 0000–9999.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Date {
    year: i64,
    month: i64,
    day: i64,
}

/// Checks `YYYY-MM-DD`; the text itself is what the kind commits.
pub fn is_date(text: &str) -> bool {
    parse_date(text.as_bytes()).is_some()
}

/// RFC 3339 `date-time` converted to UTC: `YYYY-MM-DDThh:mm:ss[.fraction]Z`.
pub fn timestamp_utc(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let date = parse_date(bytes.get(..10)?)?;
    if !matches!(bytes.get(10), Some(b'T' | b't')) {
        return None;
    }
    let hour = two_digits(bytes, 11, 23)?;
    expect(bytes, 13, b':')?;
    let minute = two_digits(bytes, 14, 59)?;
    expect(bytes, 16, b':')?;
    // 60 (a leap second) is refused: it has no place on the UTC time line.
    let second = two_digits(bytes, 17, 59)?;
    let mut at = 19;
    let mut fraction = &bytes[at..at];
    if bytes.get(at) == Some(&b'.') {
        let digits = bytes[at + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits == 0 {
            return None;
        }
        fraction = &bytes[at + 1..at + 1 + digits];
        at += 1 + digits;
    }
    let offset_minutes = match bytes.get(at..)? {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), rest @ ..] if rest.len() == 5 => {
            let hours = two_digits(rest, 0, 23)?;
            expect(rest, 2, b':')?;
            let minutes = two_digits(rest, 3, 59)?;
            let magnitude = hours * 60 + minutes;
            if *sign == b'-' {
                -magnitude
            } else {
                magnitude
            }
        }
        _ => return None,
    };
    let local_minutes = days_from_civil(date) * 1440 + hour * 60 + minute;
    let utc_minutes = local_minutes - offset_minutes;
    let utc_date = civil_from_days(utc_minutes.div_euclid(1440));
    if !(1..=9999).contains(&utc_date.year) {
        return None;
    }
    let minute_of_day = utc_minutes.rem_euclid(1440);
    let fraction = trim_trailing_zeros(fraction);
    let mut out = String::with_capacity(21 + fraction.len());
    push_padded(&mut out, utc_date.year, 4);
    out.push('-');
    push_padded(&mut out, utc_date.month, 2);
    out.push('-');
    push_padded(&mut out, utc_date.day, 2);
    out.push('T');
    push_padded(&mut out, minute_of_day / 60, 2);
    out.push(':');
    push_padded(&mut out, minute_of_day % 60, 2);
    out.push(':');
    push_padded(&mut out, second, 2);
    if !fraction.is_empty() {
        out.push('.');
        out.extend(fraction.iter().map(|&b| b as char));
    }
    out.push('Z');
    Some(out)
}

fn parse_date(bytes: &[u8]) -> Option<Date> {
    if bytes.len() != 10 {
        return None;
    }
    let year = digits(&bytes[0..4])?;
    expect(bytes, 4, b'-')?;
    let month = digits(&bytes[5..7])?;
    expect(bytes, 7, b'-')?;
    let day = digits(&bytes[8..10])?;
    let valid = (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month);
    valid.then_some(Date { year, month, day })
}

fn is_leap_year(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn digits(bytes: &[u8]) -> Option<i64> {
    bytes.iter().try_fold(0i64, |acc, &b| {
        b.is_ascii_digit().then(|| acc * 10 + i64::from(b - b'0'))
    })
}

fn two_digits(bytes: &[u8], at: usize, max: i64) -> Option<i64> {
    digits(bytes.get(at..at + 2)?).filter(|&value| value <= max)
}

fn expect(bytes: &[u8], at: usize, byte: u8) -> Option<()> {
    (bytes.get(at) == Some(&byte)).then_some(())
}

fn trim_trailing_zeros(fraction: &[u8]) -> &[u8] {
    let kept = fraction
        .iter()
        .rposition(|&b| b != b'0')
        .map_or(0, |i| i + 1);
    &fraction[..kept]
}

/// `value` (0 ≤ value < 10^width) in exactly `width` digits.
fn push_padded(out: &mut String, value: i64, width: u32) {
    for place in (0..width).rev() {
        let digit = (value / 10i64.pow(place)) % 10;
        out.push(char::from(b'0' + digit as u8));
    }
}

// Howard Hinnant's days_from_civil / civil_from_days: exact for the proleptic Gregorian
// calendar, year 0 included.
fn days_from_civil(date: Date) -> i64 {
    let year = if date.month <= 2 {
        date.year - 1
    } else {
        date.year
    };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_index = (date.month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + date.day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

fn civil_from_days(days: i64) -> Date {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    Date { year, month, day }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        for good in [
            "2024-02-29",
            "2000-02-29",
            "0000-02-29",
            "9999-12-31",
            "0000-01-01",
        ] {
            assert!(is_date(good), "{good}");
        }
        for bad in [
            "1900-02-29",
            "2023-02-29",
            "2024-04-31",
            "2024-13-01",
            "2024-00-10",
            "2024-01-00",
            "2024-1-01",
            "20240101",
            "2024-01-01 ",
            "+024-01-01",
            "2024-01-0١",
            "10000-01-01",
            "2024/01/01",
            "",
        ] {
            assert!(!is_date(bad), "{bad}");
        }
    }

    #[test]
    fn calendar_round_trip() {
        for days in [-719_528, -1, 0, 1, 11_016, 2_932_896] {
            assert_eq!(days_from_civil(civil_from_days(days)), days);
        }
        let epoch = Date {
            year: 1970,
            month: 1,
            day: 1,
        };
        assert_eq!(days_from_civil(epoch), 0);
    }

    #[test]
    fn timestamps() {
        let cases = [
            ("2024-02-29t23:30:00.1200+01:00", "2024-02-29T22:30:00.12Z"),
            ("2024-02-29T23:30:00Z", "2024-02-29T23:30:00Z"),
            ("2024-02-29T23:30:00.000z", "2024-02-29T23:30:00Z"),
            ("2024-02-29T23:30:00-00:00", "2024-02-29T23:30:00Z"),
            ("2023-12-31T23:59:59.5-01:00", "2024-01-01T00:59:59.5Z"),
            ("2024-03-01T00:10:00+00:30", "2024-02-29T23:40:00Z"),
            ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z"),
            ("0000-12-31T23:00:00-01:00", "0001-01-01T00:00:00Z"),
            (
                "9999-12-31T23:59:59.123456789123Z",
                "9999-12-31T23:59:59.123456789123Z",
            ),
            ("2024-06-01T05:00:00+23:59", "2024-05-31T05:01:00Z"),
        ];
        for (input, expected) in cases {
            assert_eq!(timestamp_utc(input).as_deref(), Some(expected), "{input}");
        }
    }

    #[test]
    fn refused_timestamps() {
        for bad in [
            "2024-02-29T23:59:60Z",
            "2024-02-30T00:00:00Z",
            "2024-02-29T24:00:00Z",
            "2024-02-29T23:60:00Z",
            "2024-02-29 23:00:00Z",
            "2024-02-29T23:00:00",
            "2024-02-29T23:00:00.Z",
            "2024-02-29T23:00Z",
            "2024-02-29T23:00:00+0100",
            "2024-02-29T23:00:00+24:00",
            "2024-02-29T23:00:00+01:60",
            "2024-02-29T23:00:00+01:00 ",
            "0001-01-01T00:00:00+00:01",
            "0000-06-01T00:00:00Z",
            "9999-12-31T23:30:00-01:00",
            "2024-02-29T2३:00:00Z",
            "2024-02-29",
        ] {
            assert_eq!(timestamp_utc(bad), None, "{bad}");
        }
    }
}
