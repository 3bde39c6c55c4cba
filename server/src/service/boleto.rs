//! FEBRABAN boletos (bank payment slips, "ficha de compensação"): the 44-digit barcode,
//! the 47-digit typed line (linha digitável) people key in, the due-date factor and the
//! Interleaved 2 of 5 symbology the barcode is printed in.
//!
//! Pure functions, no I/O. Everything that reads a barcode or a typed line checks its
//! check digits before returning anything, so a number that came back `Ok` has passed
//! every check a bank applies to a typed or scanned boleto. The rules and the reference
//! vector are in DOMAIN.md, "Boleto (FEBRABAN)".
//!
//! Barcode layout (0-based positions): `0..3` bank, `3` currency (`9` = real), `4` general
//! check digit, `5..9` due-date factor, `9..19` value in cents, `19..44` free field (the
//! issuing bank's own layout).

use time::{Date, Duration, macros::date};

/// Digits in a barcode.
const BARCODE_LEN: usize = 44;
/// Digits in a typed line.
const TYPED_LINE_LEN: usize = 47;
/// Digits in the free field of a barcode.
const FREE_FIELD_LEN: usize = 25;
/// The largest value the 10 digits of a barcode can carry, in cents.
pub const MAX_VALUE_CENTS: i64 = 9_999_999_999;

/// The first day with a four-digit factor (1000) in the first cycle: 1000 days after
/// 1997-10-07, day 0 of the original count.
const FIRST_CYCLE_START: Date = date!(2000 - 07 - 03);
/// A factor cycle runs from 1000 to 9999.
const CYCLE_DAYS: i64 = 9000;
/// Cycles that FEBRABAN has defined: the original one (2000-07-03 ..= 2025-02-21) and the
/// one that restarted at 1000 on 2025-02-22 (up to 2049-10-13).
const CYCLES: i64 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BoletoError {
    /// A barcode that is not 44 digits, a typed line that is not 47, a bank code that is
    /// not 3 or a free field that is not 25.
    #[error("boleto number has the wrong number of digits")]
    Length,
    #[error("boleto number has characters that are not digits")]
    NotDigits,
    /// `field` 1 to 3: the mod-10 digit of that typed-line field; 4: the general (mod-11)
    /// check digit of the barcode, which is field 4 of the typed line.
    #[error("boleto check digit of field {field} is wrong")]
    CheckDigit { field: u8 },
    #[error("boleto value is larger than 99,999,999.99")]
    ValueTooLarge,
    #[error("boleto value is negative")]
    NegativeValue,
    /// A due date outside the defined factor cycles (2000-07-03 ..= 2049-10-13).
    #[error("boleto due date has no due-date factor")]
    DateOutOfRange,
    /// A factor that does not name a date (0 means "no due date"; below 1000 is unused).
    #[error("boleto due-date factor must be between 1000 and 9999")]
    FactorOutOfRange,
}

/// Due-date factor: days since 1997-10-07, restarting at 1000 on 2025-02-22 (9999 was
/// 2025-02-21), next wrap in 2049. Dates before 2025-02-22 use the old count, which must be
/// at least 1000 (from 2000-07-03); dates in the new cycle go up to its 9999 (2049-10-13).
pub fn due_date_factor(date: Date) -> Result<u16, BoletoError> {
    let offset = (date - FIRST_CYCLE_START).whole_days();
    if !(0..CYCLES * CYCLE_DAYS).contains(&offset) {
        return Err(BoletoError::DateOutOfRange);
    }
    u16::try_from(1000 + offset % CYCLE_DAYS).map_err(|_| BoletoError::DateOutOfRange)
}

/// The date of a factor in the cycle closest to `around` (usually today), among the cycles
/// [`due_date_factor`] knows; a tie between two cycles goes to the later one. So
/// `factor_date(due_date_factor(d)?, d) == Ok(d)` for every date `d` that has a factor.
pub fn factor_date(factor: u16, around: Date) -> Result<Date, BoletoError> {
    if !(1000..=9999).contains(&factor) {
        return Err(BoletoError::FactorOutOfRange);
    }
    let in_first_cycle = FIRST_CYCLE_START + Duration::days(i64::from(factor) - 1000);
    let distance = (around - in_first_cycle).whole_days();
    let cycle = (distance + CYCLE_DAYS / 2)
        .div_euclid(CYCLE_DAYS)
        .clamp(0, CYCLES - 1);
    in_first_cycle
        .checked_add(Duration::days(cycle * CYCLE_DAYS))
        .ok_or(BoletoError::DateOutOfRange)
}

/// The value of an ASCII digit; any other character counts as 0.
fn digit(c: u8) -> u32 {
    if c.is_ascii_digit() {
        u32::from(c - b'0')
    } else {
        0
    }
}

/// FEBRABAN field check digit ("módulo 10"): weights 2, 1, 2, 1... from the right, the
/// digits of each product summed, check = (10 - sum mod 10) mod 10. Meant for ASCII digits;
/// any other character counts as 0.
pub fn mod10(digits: &str) -> u8 {
    let sum: u32 = digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, c)| {
            let product = digit(c) * if i % 2 == 0 { 2 } else { 1 };
            product / 10 + product % 10
        })
        .sum();
    ((10 - sum % 10) % 10) as u8
}

/// General check digit of the barcode ("módulo 11"): weights 2 to 9 repeating from the
/// right, check = 11 - sum mod 11, where the results 0, 10 and 11 become 1. Meant for ASCII
/// digits; any other character counts as 0.
pub fn mod11(digits: &str) -> u8 {
    let sum: u32 = digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, c)| digit(c) * (2 + (i % 8) as u32))
        .sum();
    match 11 - sum % 11 {
        0 | 10 | 11 => 1,
        check => check as u8,
    }
}

/// Checks that `text` is exactly `len` ASCII digits.
fn digits_of_len(text: &str, len: usize) -> Result<(), BoletoError> {
    if !text.bytes().all(|c| c.is_ascii_digit()) {
        Err(BoletoError::NotDigits)
    } else if text.len() != len {
        Err(BoletoError::Length)
    } else {
        Ok(())
    }
}

/// The general check digit of a 44-digit barcode: mod 11 over every digit but position 4.
fn general_check_digit(barcode: &str) -> u8 {
    mod11(&format!("{}{}", &barcode[..4], &barcode[5..]))
}

/// The 44-digit barcode: bank(3) + currency '9' + general DV + factor(4) + value in
/// cents(10) + free field(25).
pub fn barcode(
    bank: &str,
    due: Date,
    value_cents: i64,
    free_field: &str,
) -> Result<String, BoletoError> {
    digits_of_len(bank, 3)?;
    digits_of_len(free_field, FREE_FIELD_LEN)?;
    if value_cents < 0 {
        return Err(BoletoError::NegativeValue);
    }
    if value_cents > MAX_VALUE_CENTS {
        return Err(BoletoError::ValueTooLarge);
    }
    let factor = due_date_factor(due)?;
    let mut code = format!("{bank}90{factor:04}{value_cents:010}{free_field}");
    let check = general_check_digit(&code);
    code.replace_range(4..5, &check.to_string());
    Ok(code)
}

/// Checks length, digits and the general check digit.
pub fn validate_barcode(barcode: &str) -> Result<(), BoletoError> {
    digits_of_len(barcode, BARCODE_LEN)?;
    if barcode.as_bytes()[4] - b'0' != general_check_digit(barcode) {
        return Err(BoletoError::CheckDigit { field: 4 });
    }
    Ok(())
}

/// The 47-digit typed line (linha digitável) of a valid barcode: fields with their mod-10
/// digits, the general DV, factor+value.
pub fn typed_line(barcode: &str) -> Result<String, BoletoError> {
    validate_barcode(barcode)?;
    let field1 = format!("{}{}", &barcode[0..4], &barcode[19..24]);
    let field2 = &barcode[24..34];
    let field3 = &barcode[34..44];
    Ok(format!(
        "{field1}{}{field2}{}{field3}{}{}{}",
        mod10(&field1),
        mod10(field2),
        mod10(field3),
        &barcode[4..5],
        &barcode[5..19],
    ))
}

/// A typed line without the dots and whitespace of its printed form.
fn strip_typed_line(line: &str) -> String {
    line.chars()
        .filter(|c| *c != '.' && !c.is_whitespace())
        .collect()
}

/// The barcode of a typed line, after checking every field's mod-10 digit and the general
/// digit. Accepts the formatted form too (dots and spaces ignored).
pub fn barcode_from_typed_line(line: &str) -> Result<String, BoletoError> {
    let line = strip_typed_line(line);
    digits_of_len(&line, TYPED_LINE_LEN)?;
    // (field number, digits, check digit position)
    for (field, range, check) in [(1, 0..9, 9), (2, 10..20, 20), (3, 21..31, 31)] {
        if line.as_bytes()[check] - b'0' != mod10(&line[range]) {
            return Err(BoletoError::CheckDigit { field });
        }
    }
    let barcode = format!(
        "{}{}{}{}{}{}",
        &line[0..4],
        &line[32..33],
        &line[33..47],
        &line[4..9],
        &line[10..20],
        &line[21..31],
    );
    validate_barcode(&barcode)?;
    Ok(barcode)
}

/// The usual printed form: `AAAAA.AAAAA BBBBB.BBBBBB CCCCC.CCCCCC D EEEEEEEEEEEEEE`. Takes
/// the typed line with or without punctuation; anything that is not 47 digits once dots
/// and whitespace are dropped comes back unchanged.
pub fn format_typed_line(line: &str) -> String {
    let d = strip_typed_line(line);
    if digits_of_len(&d, TYPED_LINE_LEN).is_err() {
        return line.to_owned();
    }
    format!(
        "{}.{} {}.{} {}.{} {} {}",
        &d[0..5],
        &d[5..10],
        &d[10..15],
        &d[15..21],
        &d[21..26],
        &d[26..32],
        &d[32..33],
        &d[33..47],
    )
}

/// Widths of the five elements of each digit in Interleaved 2 of 5: `true` = wide.
const I2OF5: [[bool; 5]; 10] = {
    const N: bool = false;
    const W: bool = true;
    [
        [N, N, W, W, N],
        [W, N, N, N, W],
        [N, W, N, N, W],
        [W, W, N, N, N],
        [N, N, W, N, W],
        [W, N, W, N, N],
        [N, W, W, N, N],
        [N, N, N, W, W],
        [W, N, N, W, N],
        [N, W, N, W, N],
    ]
};
/// Modules of a wide element (FEBRABAN: wide is 3 times narrow).
const WIDE: usize = 3;

/// Interleaved 2 of 5 of an even number of digits, as module colours (true = bar): start
/// pattern narrow bar, narrow space, narrow bar, narrow space; pairs of digits interleaved
/// (first digit in bars, second in spaces); stop pattern wide bar, narrow space, narrow
/// bar. Narrow = 1 module, wide = 3 modules (the FEBRABAN ratio). Odd length or
/// non-digits: Err.
pub fn interleaved_2_of_5(digits: &str) -> Result<Vec<bool>, BoletoError> {
    if !digits.bytes().all(|c| c.is_ascii_digit()) {
        return Err(BoletoError::NotDigits);
    }
    if !digits.len().is_multiple_of(2) {
        return Err(BoletoError::Length);
    }
    let width = |wide: bool| if wide { WIDE } else { 1 };
    let mut modules = Vec::with_capacity(4 + digits.len() / 2 * 2 * (2 * WIDE + 3) + WIDE + 2);
    modules.extend([true, false, true, false]);
    for pair in digits.as_bytes().chunks_exact(2) {
        let bars = I2OF5[usize::from(pair[0] - b'0')];
        let spaces = I2OF5[usize::from(pair[1] - b'0')];
        for (bar, space) in bars.into_iter().zip(spaces) {
            modules.extend(std::iter::repeat_n(true, width(bar)));
            modules.extend(std::iter::repeat_n(false, width(space)));
        }
    }
    modules.extend(std::iter::repeat_n(true, WIDE));
    modules.extend([false, true]);
    Ok(modules)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DOMAIN.md, "Boleto (FEBRABAN)".
    const DOMAIN_BARCODE: &str = "34196790600001000002220000005566385101214000";
    const DOMAIN_LINE: &str = "34192220090000556638551012140003679060000100000";

    /// Published boletos: (source, barcode, typed line as printed, due date, cents).
    /// Each was checked against this module's mod10/mod11 before being trusted.
    const PUBLISHED: [(&str, &str, &str, Date, i64); 5] = [
        (
            // github.com/eduardocereto/pyboleto tests/test_banco_do_brasil.py
            "Banco do Brasil, pyboleto",
            "00196490000002952950000007777777000008765418",
            "00190.00009 07777.777009 00087.654182 6 49000000295295",
            date!(2011 - 03 - 08),
            295_295,
        ),
        (
            // github.com/eduardocereto/pyboleto tests/test_banco_caixa.py
            "Caixa, pyboleto",
            "10491538800002952958019525086156587000000414",
            "10498.01952 25086.156582 70000.004146 1 53880000295295",
            date!(2012 - 07 - 08),
            295_295,
        ),
        (
            // github.com/eduardocereto/pyboleto tests/test_banco_bradesco.py
            "Bradesco, pyboleto",
            "23794486900008280000278060000212552500392320",
            "23790.27804 60000.212559 25003.923205 4 48690000828000",
            date!(2011 - 02 - 05),
            828_000,
        ),
        (
            // github.com/eduardocereto/pyboleto tests/test_banco_itau.py
            "Itaú, pyboleto",
            "34199439500000029801090000015710293013280000",
            "34191.09008 00015.710296 30132.800001 9 43950000002980",
            date!(2009 - 10 - 19),
            2_980,
        ),
        (
            // github.com/umbrellaTech/pyaboleto tests/test_base.py (BB, convênio 6); the
            // same pair is the usual Banco do Brasil example in many boleto libraries.
            "Banco do Brasil, pyaboleto",
            "00193373700000001000500940144816060680935031",
            "00190.50095 40144.816069 06809.350314 3 37370000000100",
            date!(2007 - 12 - 31),
            100,
        ),
    ];

    /// The raw mod-11 remainder, to build cases for the 0/10/11 -> 1 rule.
    fn mod11_remainder(digits: &str) -> u32 {
        digits
            .bytes()
            .rev()
            .enumerate()
            .map(|(i, c)| u32::from(c - b'0') * (2 + (i % 8) as u32))
            .sum::<u32>()
            % 11
    }

    fn with_digit(text: &str, position: usize, new: u8) -> String {
        let mut bytes = text.as_bytes().to_vec();
        bytes[position] = new;
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn domain_vector_both_ways() {
        assert_eq!(validate_barcode(DOMAIN_BARCODE), Ok(()));
        assert_eq!(typed_line(DOMAIN_BARCODE).unwrap(), DOMAIN_LINE);
        assert_eq!(
            barcode_from_typed_line(DOMAIN_LINE).unwrap(),
            DOMAIN_BARCODE
        );
        assert_eq!(
            format_typed_line(DOMAIN_LINE),
            "34192.22009 00005.566385 51012.140003 6 79060000100000"
        );
    }

    #[test]
    fn domain_vector_is_built_from_its_parts() {
        let free_field = &DOMAIN_BARCODE[19..44];
        assert_eq!(free_field, "2220000005566385101214000");
        assert_eq!(
            barcode("341", date!(2019 - 05 - 31), 100_000, free_field).unwrap(),
            DOMAIN_BARCODE
        );
    }

    #[test]
    fn published_boletos() {
        for (source, code, printed, due, cents) in PUBLISHED {
            assert_eq!(validate_barcode(code), Ok(()), "{source}");
            let line = typed_line(code).unwrap();
            assert_eq!(format_typed_line(&line), printed, "{source}");
            assert_eq!(barcode_from_typed_line(printed).unwrap(), code, "{source}");
            assert_eq!(barcode_from_typed_line(&line).unwrap(), code, "{source}");
            let rebuilt = barcode(&code[0..3], due, cents, &code[19..44]).unwrap();
            assert_eq!(rebuilt, code, "{source}");
            let factor: u16 = code[5..9].parse().unwrap();
            assert_eq!(due_date_factor(due), Ok(factor), "{source}");
            assert_eq!(factor_date(factor, due), Ok(due), "{source}");
        }
    }

    #[test]
    fn round_trips_over_dates_values_and_free_fields() {
        let dates = [
            date!(2000 - 07 - 03),
            date!(2007 - 12 - 31),
            date!(2019 - 05 - 31),
            date!(2025 - 02 - 21),
            date!(2025 - 02 - 22),
            date!(2026 - 01 - 15),
            date!(2049 - 10 - 13),
        ];
        let values = [0, 1, 99, 100_000, 123_456_789, MAX_VALUE_CENTS];
        let free_fields = [
            "0000000000000000000000000",
            "9999999999999999999999999",
            "2220000005566385101214000",
            "1234567890123456789012345",
            "5000000000000000000000005",
        ];
        for bank in ["001", "341", "999"] {
            for due in dates {
                for value in values {
                    for free in free_fields {
                        let code = barcode(bank, due, value, free).unwrap();
                        assert_eq!(code.len(), 44);
                        assert_eq!(validate_barcode(&code), Ok(()));
                        let line = typed_line(&code).unwrap();
                        assert_eq!(line.len(), 47);
                        assert_eq!(barcode_from_typed_line(&line).unwrap(), code);
                        let printed = format_typed_line(&line);
                        assert_eq!(barcode_from_typed_line(&printed).unwrap(), code);
                        assert_eq!(code[9..19].parse::<i64>().unwrap(), value);
                        let factor = code[5..9].parse().unwrap();
                        assert_eq!(factor_date(factor, due), Ok(due));
                    }
                }
            }
        }
    }

    #[test]
    fn due_date_factor_on_both_sides_of_the_reset() {
        let cases = [
            (date!(2000 - 07 - 03), 1000),
            (date!(2000 - 07 - 05), 1002),
            (date!(2002 - 05 - 01), 1667),
            (date!(2010 - 11 - 17), 4789),
            (date!(2019 - 05 - 31), 7906),
            (date!(2025 - 02 - 21), 9999),
            (date!(2025 - 02 - 22), 1000),
            (date!(2025 - 02 - 23), 1001),
            (date!(2049 - 10 - 13), 9999),
        ];
        for (day, factor) in cases {
            if day < date!(2025 - 02 - 22) {
                let since_base = (day - date!(1997 - 10 - 07)).whole_days();
                assert_eq!(since_base, i64::from(factor), "{day}");
            }
            assert_eq!(due_date_factor(day), Ok(factor), "{day}");
            assert_eq!(factor_date(factor, day), Ok(day), "{day}");
        }
    }

    #[test]
    fn due_date_factor_refuses_dates_outside_the_cycles() {
        for day in [
            date!(1997 - 10 - 07),
            date!(2000 - 07 - 02),
            date!(2049 - 10 - 14),
            date!(2100 - 01 - 01),
        ] {
            assert_eq!(
                due_date_factor(day),
                Err(BoletoError::DateOutOfRange),
                "{day}"
            );
        }
        let free = "0".repeat(25);
        assert_eq!(
            barcode("341", date!(2000 - 07 - 02), 1, &free),
            Err(BoletoError::DateOutOfRange)
        );
    }

    #[test]
    fn factor_date_picks_the_closest_cycle() {
        // Factor 1000 is 2000-07-03 and 2025-02-22; 9999 is 2025-02-21 and 2049-10-13.
        assert_eq!(
            factor_date(1000, date!(2025 - 01 - 01)),
            Ok(date!(2025 - 02 - 22))
        );
        assert_eq!(
            factor_date(1000, date!(2005 - 01 - 01)),
            Ok(date!(2000 - 07 - 03))
        );
        assert_eq!(
            factor_date(9999, date!(2025 - 03 - 01)),
            Ok(date!(2025 - 02 - 21))
        );
        assert_eq!(
            factor_date(9999, date!(2040 - 01 - 01)),
            Ok(date!(2049 - 10 - 13))
        );
        assert_eq!(
            factor_date(7906, date!(2026 - 06 - 01)),
            Ok(date!(2019 - 05 - 31))
        );
        // Outside the known cycles the nearest known cycle answers.
        assert_eq!(
            factor_date(1000, date!(1990 - 01 - 01)),
            Ok(date!(2000 - 07 - 03))
        );
        assert_eq!(
            factor_date(1000, date!(2080 - 01 - 01)),
            Ok(date!(2025 - 02 - 22))
        );
        for factor in [0, 1, 999, 10_000, u16::MAX] {
            assert_eq!(
                factor_date(factor, date!(2025 - 01 - 01)),
                Err(BoletoError::FactorOutOfRange)
            );
        }
    }

    #[test]
    fn every_date_with_a_factor_comes_back() {
        let mut day = date!(2000 - 07 - 03);
        while day <= date!(2049 - 10 - 13) {
            let factor = due_date_factor(day).unwrap();
            assert!((1000..=9999).contains(&factor));
            assert_eq!(factor_date(factor, day), Ok(day));
            day = day.next_day().unwrap();
        }
    }

    #[test]
    fn mod10_and_mod11_known_values() {
        // Fields of the DOMAIN.md typed line.
        assert_eq!(mod10("341922200"), 9);
        assert_eq!(mod10("0000556638"), 5);
        assert_eq!(mod10("5101214000"), 3);
        assert_eq!(mod10(""), 0);
        assert_eq!(mod11("3419790600001000002220000005566385101214000"), 6);
        assert_eq!(mod11("1"), 9);
    }

    #[test]
    fn general_check_digit_zero_ten_and_eleven_become_one() {
        // "0": sum 0, remainder 0, 11 - 0 = 11. "31": 3*3 + 1*2 = 11, remainder 0.
        // "40": 4*3 = 12, remainder 1, 11 - 1 = 10.
        assert_eq!(mod11_remainder("0"), 0);
        assert_eq!(mod11("0"), 1);
        assert_eq!(mod11_remainder("31"), 0);
        assert_eq!(mod11("31"), 1);
        assert_eq!(mod11_remainder("40"), 1);
        assert_eq!(mod11("40"), 1);

        // Whole barcodes whose remainder is 0 and 1: their general digit is 1.
        let mut seen = [false; 2];
        for n in 0..1000u32 {
            let free = format!("{n:025}");
            let code = barcode("341", date!(2026 - 03 - 10), 12_345, &free).unwrap();
            let remainder = mod11_remainder(&format!("{}{}", &code[..4], &code[5..]));
            if remainder <= 1 {
                seen[remainder as usize] = true;
                assert_eq!(&code[4..5], "1", "{code}");
                assert_eq!(validate_barcode(&code), Ok(()));
                for wrong in b"023456789" {
                    assert_eq!(
                        validate_barcode(&with_digit(&code, 4, *wrong)),
                        Err(BoletoError::CheckDigit { field: 4 })
                    );
                }
                let line = typed_line(&code).unwrap();
                assert_eq!(barcode_from_typed_line(&line).unwrap(), code);
            }
        }
        assert_eq!(seen, [true, true]);
    }

    #[test]
    fn a_changed_digit_in_any_field_is_refused() {
        // Typed-line positions: field 1 is 0..10, field 2 10..21, field 3 21..32, field 4
        // (the general digit) 32, field 5 (factor and value) 33..47.
        let field_of = |position: usize| match position {
            0..10 => 1,
            10..21 => 2,
            21..32 => 3,
            _ => 4,
        };
        for position in 0..47 {
            for new in b'0'..=b'9' {
                if DOMAIN_LINE.as_bytes()[position] == new {
                    continue;
                }
                let changed = with_digit(DOMAIN_LINE, position, new);
                assert_eq!(
                    barcode_from_typed_line(&changed),
                    Err(BoletoError::CheckDigit {
                        field: field_of(position)
                    }),
                    "position {position}, digit {}",
                    char::from(new)
                );
            }
        }
        for position in (0..44).filter(|p| *p != 4) {
            let old = DOMAIN_BARCODE.as_bytes()[position];
            let changed = with_digit(DOMAIN_BARCODE, position, b'0' + (old - b'0' + 1) % 10);
            assert_eq!(
                validate_barcode(&changed),
                Err(BoletoError::CheckDigit { field: 4 })
            );
            assert_eq!(
                typed_line(&changed),
                Err(BoletoError::CheckDigit { field: 4 })
            );
        }
    }

    #[test]
    fn wrong_lengths_and_letters_are_refused() {
        let free = "0".repeat(25);
        let day = date!(2026 - 03 - 10);
        assert_eq!(validate_barcode(""), Err(BoletoError::Length));
        assert_eq!(
            validate_barcode(&DOMAIN_BARCODE[..43]),
            Err(BoletoError::Length)
        );
        assert_eq!(
            validate_barcode(&format!("{DOMAIN_BARCODE}0")),
            Err(BoletoError::Length)
        );
        assert_eq!(
            validate_barcode(&with_digit(DOMAIN_BARCODE, 10, b'A')),
            Err(BoletoError::NotDigits)
        );
        assert_eq!(
            validate_barcode(" 34196790600001000002220000005566385101214000"),
            Err(BoletoError::NotDigits)
        );
        assert_eq!(typed_line(DOMAIN_LINE), Err(BoletoError::Length));

        assert_eq!(
            barcode_from_typed_line(&DOMAIN_LINE[..46]),
            Err(BoletoError::Length)
        );
        assert_eq!(
            barcode_from_typed_line(&format!("{DOMAIN_LINE}0")),
            Err(BoletoError::Length)
        );
        assert_eq!(
            barcode_from_typed_line(DOMAIN_BARCODE),
            Err(BoletoError::Length)
        );
        assert_eq!(
            barcode_from_typed_line(&with_digit(DOMAIN_LINE, 40, b'x')),
            Err(BoletoError::NotDigits)
        );
        assert_eq!(
            barcode_from_typed_line("34192-22009 00005-566385 51012-140003 6 79060000100000"),
            Err(BoletoError::NotDigits)
        );

        assert_eq!(barcode("34", day, 1, &free), Err(BoletoError::Length));
        assert_eq!(barcode("3411", day, 1, &free), Err(BoletoError::Length));
        assert_eq!(barcode("34a", day, 1, &free), Err(BoletoError::NotDigits));
        assert_eq!(
            barcode("341", day, 1, &free[..24]),
            Err(BoletoError::Length)
        );
        assert_eq!(
            barcode("341", day, 1, &format!("{free}0")),
            Err(BoletoError::Length)
        );
        assert_eq!(
            barcode("341", day, 1, &with_digit(&free, 3, b'Z')),
            Err(BoletoError::NotDigits)
        );
    }

    #[test]
    fn values_outside_ten_digits_are_refused() {
        let free = "0".repeat(25);
        let day = date!(2026 - 03 - 10);
        assert!(barcode("341", day, MAX_VALUE_CENTS, &free).is_ok());
        assert_eq!(
            barcode("341", day, MAX_VALUE_CENTS + 1, &free),
            Err(BoletoError::ValueTooLarge)
        );
        assert_eq!(
            barcode("341", day, i64::MAX, &free),
            Err(BoletoError::ValueTooLarge)
        );
        assert_eq!(
            barcode("341", day, -1, &free),
            Err(BoletoError::NegativeValue)
        );
    }

    #[test]
    fn formatting_the_typed_line() {
        let printed = "34192.22009 00005.566385 51012.140003 6 79060000100000";
        assert_eq!(format_typed_line(DOMAIN_LINE), printed);
        assert_eq!(format_typed_line(printed), printed);
        assert_eq!(format_typed_line("not a line"), "not a line");
        assert_eq!(barcode_from_typed_line(printed).unwrap(), DOMAIN_BARCODE);
        assert_eq!(
            barcode_from_typed_line(" 34192.22009\t00005.566385  51012.140003 6 79060000100000\n")
                .unwrap(),
            DOMAIN_BARCODE
        );
    }

    /// Modules as `1`/`0` text, for readable assertions.
    fn text(modules: &[bool]) -> String {
        modules.iter().map(|m| if *m { '1' } else { '0' }).collect()
    }

    #[test]
    fn interleaved_2_of_5_of_a_barcode() {
        let modules = interleaved_2_of_5(DOMAIN_BARCODE).unwrap();
        // Start 4 + 22 pairs * 2 digits * (2 wide * 3 + 3 narrow) + stop 5.
        assert_eq!(modules.len(), 4 + 22 * 18 + 5);
        assert_eq!(modules.len(), 405);
        let modules = text(&modules);
        assert!(modules.starts_with("1010"), "{modules}");
        assert!(modules.ends_with("11101"), "{modules}");
        // "34": bars 3 = WWNNN, spaces 4 = NNWNW.
        assert_eq!(&modules[4..22], "111011101000101000");
    }

    #[test]
    fn interleaved_2_of_5_pairs() {
        // Start, one pair, stop.
        let encode = |pair: &str| {
            let modules = text(&interleaved_2_of_5(pair).unwrap());
            assert_eq!(modules.len(), 4 + 18 + 5);
            assert_eq!(&modules[..4], "1010");
            assert_eq!(&modules[22..], "11101");
            modules[4..22].to_owned()
        };
        // "00": bars NNWWN, spaces NNWWN.
        assert_eq!(encode("00"), concat!("10", "10", "111000", "111000", "10"));
        // "19": bars 1 = WNNNW, spaces 9 = NWNWN.
        assert_eq!(encode("19"), concat!("1110", "1000", "10", "1000", "1110"));
        // Every digit has two wide and three narrow elements, as bar and as space.
        for a in 0..10 {
            for b in 0..10 {
                let modules = encode(&format!("{a}{b}"));
                assert_eq!(modules.chars().filter(|c| *c == '1').count(), 9);
                assert_eq!(modules.chars().filter(|c| *c == '0').count(), 9);
            }
        }
        assert_eq!(text(&interleaved_2_of_5("").unwrap()), "101011101");
    }

    #[test]
    fn interleaved_2_of_5_refusals() {
        assert_eq!(interleaved_2_of_5("123"), Err(BoletoError::Length));
        assert_eq!(interleaved_2_of_5("1"), Err(BoletoError::Length));
        assert_eq!(interleaved_2_of_5("12a4"), Err(BoletoError::NotDigits));
        assert_eq!(interleaved_2_of_5("12 4"), Err(BoletoError::NotDigits));
    }
}
