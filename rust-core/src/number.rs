//! Number text (docs/spec.md section 1.4) and fixed-decimal coordinates (section 3.4).

/// Largest magnitude a field number may have: 2^53 − 1.
pub const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// ECMAScript `Number::toString` of a finite double.
pub fn write(value: f64, out: &mut Vec<u8>) {
    // Whole numbers are the common case and need no shortest-digits search; below 2^53 their
    // ECMAScript text is the plain integer (and -0 is "0").
    if value.fract() == 0.0 && value.abs() <= MAX_SAFE_INTEGER {
        if value < 0.0 {
            out.push(b'-');
        }
        push_digits(value.abs() as u64, out);
        return;
    }
    let mut buffer = ryu_js::Buffer::new();
    out.extend_from_slice(buffer.format_finite(value).as_bytes());
}

pub fn text(value: f64) -> String {
    let mut out = Vec::with_capacity(24);
    write(value, &mut out);
    // Only ASCII was written.
    String::from_utf8(out).unwrap_or_default()
}

fn push_digits(mut value: u64, out: &mut Vec<u8>) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// The shortest decimal of a finite double as `(negative, digits, exponent)`, meaning
/// `±digits × 10^exponent`. At most 17 significant digits, so `digits` fits in a u64.
fn shortest_decimal(value: f64) -> (bool, u64, i32) {
    let mut buffer = ryu_js::Buffer::new();
    let text = buffer.format_finite(value).as_bytes();
    let (negative, text) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let (mantissa, exponent) = match text.iter().position(|&b| b == b'e') {
        Some(e) => (&text[..e], parse_exponent(&text[e + 1..])),
        None => (text, 0),
    };
    let mut digits = 0u64;
    let mut fraction_digits = 0i32;
    let mut after_point = false;
    for &b in mantissa {
        if b == b'.' {
            after_point = true;
        } else {
            digits = digits * 10 + u64::from(b - b'0');
            fraction_digits += i32::from(after_point);
        }
    }
    (negative, digits, exponent - fraction_digits)
}

fn parse_exponent(text: &[u8]) -> i32 {
    let (sign, digits) = match text.split_first() {
        Some((b'-', rest)) => (-1, rest),
        Some((b'+', rest)) => (1, rest),
        _ => (1, text),
    };
    sign * digits
        .iter()
        .fold(0i32, |acc, &b| acc * 10 + i32::from(b - b'0'))
}

/// Writes `value` with exactly `decimals` decimals, its shortest decimal text rounded half to
/// even (not its exact binary value, which is what `toFixed` would round). `|value|` must be
/// small enough for `value × 10^decimals` to fit in a u64; coordinates are at most 180.
pub fn write_fixed(value: f64, decimals: u32, out: &mut Vec<u8>) {
    let (negative, digits, exponent) = shortest_decimal(value);
    let shift = exponent + decimals as i32;
    let scaled = if shift >= 0 {
        digits.saturating_mul(10u64.saturating_pow(shift as u32))
    } else {
        round_half_even(digits, shift.unsigned_abs())
    };
    if negative && scaled != 0 {
        out.push(b'-');
    }
    let unit = 10u64.pow(decimals);
    push_digits(scaled / unit, out);
    if decimals > 0 {
        out.push(b'.');
        let fraction = scaled % unit;
        for place in (0..decimals).rev() {
            out.push(b'0' + (fraction / 10u64.pow(place) % 10) as u8);
        }
    }
}

/// `digits / 10^dropped`, rounded half to even.
fn round_half_even(digits: u64, dropped: u32) -> u64 {
    // 10^18 is above every 17-digit mantissa's double: the quotient is below one half.
    if dropped >= 19 {
        return 0;
    }
    let unit = 10u64.pow(dropped);
    let (kept, rest) = (digits / unit, digits % unit);
    let half = unit / 2;
    if rest > half || (rest == half && kept % 2 == 1) {
        kept + 1
    } else {
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(value: f64, decimals: u32) -> String {
        let mut out = Vec::new();
        write_fixed(value, decimals, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn ecmascript_text() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-1.5, "-1.5"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (123456789012345680000.0, "123456789012345680000"),
            (0.000001, "0.000001"),
            (0.0000015, "0.0000015"),
            (1.5e-7, "1.5e-7"),
            (0.1 + 0.2, "0.30000000000000004"),
            (9007199254740991.0, "9007199254740991"),
            (9007199254740992.0, "9007199254740992"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (-1e-7, "-1e-7"),
        ];
        for &(value, expected) in cases {
            assert_eq!(text(value), expected, "{value:e}");
        }
    }

    #[test]
    fn coordinates_of_the_spec() {
        assert_eq!(fixed(48.8583701, 6), "48.858370");
        assert_eq!(fixed(0.0000005, 6), "0.000000");
        assert_eq!(fixed(0.0000015, 6), "0.000002");
        assert_eq!(fixed(-0.0000004, 6), "0.000000");
        assert_eq!(fixed(2.3456785, 6), "2.345678");
        assert_eq!(fixed(2.3456795, 6), "2.345680");
    }

    #[test]
    fn coordinates_edges() {
        assert_eq!(fixed(-0.0, 6), "0.000000");
        assert_eq!(fixed(90.0, 9), "90.000000000");
        assert_eq!(fixed(-180.0, 6), "-180.000000");
        assert_eq!(fixed(-0.0000015, 6), "-0.000002");
        assert_eq!(fixed(-0.0000025, 6), "-0.000002");
        assert_eq!(fixed(0.9999995, 6), "1.000000");
        assert_eq!(fixed(1e-300, 9), "0.000000000");
        assert_eq!(fixed(12.3, 9), "12.300000000");
        assert_eq!(fixed(0.1234567895, 9), "0.123456790");
        assert_eq!(fixed(179.99999999999997, 6), "180.000000");
    }
}
