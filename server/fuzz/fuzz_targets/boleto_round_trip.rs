//! `boleto::barcode` from any bank, due date, value and free field: it refuses exactly
//! what is out of range, and a barcode it builds validates, carries each part where
//! FEBRABAN puts it, and survives typed line -> barcode in both printed forms. Due-date
//! factors and their dates convert into each other.
#![no_main]

use arbitrary::Arbitrary;
use cofre_fuzz::service::boleto::{
    BoletoError, MAX_VALUE_CENTS, barcode, barcode_from_typed_line, due_date_factor, factor_date,
    format_typed_line, typed_line, validate_barcode,
};
use libfuzzer_sys::fuzz_target;
use time::{Date, macros::date};

#[derive(Arbitrary, Debug)]
enum Digits<'a> {
    /// A number written with leading zeros to the field's width.
    Number(u64),
    /// Any text, to exercise the refusals.
    Raw(&'a str),
}

impl Digits<'_> {
    fn text(&self, width: usize) -> String {
        match self {
            Digits::Number(n) => {
                let s = format!("{n:0width$}");
                s[s.len() - width..].to_owned()
            }
            Digits::Raw(s) => (*s).to_owned(),
        }
    }
}

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    bank: Digits<'a>,
    /// Days from 2000-07-03, the first date with a factor.
    due_offset: i16,
    value: i64,
    free_field: Digits<'a>,
    free_field_high: u64,
    factor: u16,
    around_offset: i32,
}

const START: Date = date!(2000 - 07 - 03);

fn is_digits(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_digit())
}

fuzz_target!(|input: Input<'_>| {
    let bank = input.bank.text(3);
    let free = match &input.free_field {
        // 25 digits do not fit a u64: two numbers side by side.
        Digits::Number(n) => format!(
            "{:010}{:015}",
            input.free_field_high % 10_000_000_000,
            n % 1_000_000_000_000_000
        ),
        raw => raw.text(25),
    };
    let due = START + time::Duration::days(i64::from(input.due_offset) * 2);
    let factor = due_date_factor(due);
    let built = barcode(&bank, due, input.value, &free);
    let in_range = is_digits(&bank, 3)
        && is_digits(&free, 25)
        && (0..=MAX_VALUE_CENTS).contains(&input.value)
        && factor.is_ok();
    assert_eq!(
        built.is_ok(),
        in_range,
        "{bank:?} {due} {} {free:?}: {built:?}",
        input.value
    );

    if let Ok(factor) = factor {
        assert!((1000..=9999).contains(&factor));
        assert_eq!(factor_date(factor, due), Ok(due));
    } else {
        assert_eq!(factor, Err(BoletoError::DateOutOfRange));
    }

    if let Ok(code) = built {
        assert_eq!(code.len(), 44);
        assert_eq!(validate_barcode(&code), Ok(()));
        assert_eq!(&code[0..3], bank);
        assert_eq!(&code[3..4], "9");
        assert_eq!(code[5..9].parse::<u16>().ok(), factor.ok());
        assert_eq!(code[9..19].parse::<i64>().unwrap(), input.value);
        assert_eq!(&code[19..44], free);
        let line = typed_line(&code).unwrap();
        assert_eq!(barcode_from_typed_line(&line).as_ref(), Ok(&code));
        assert_eq!(
            barcode_from_typed_line(&format_typed_line(&line)).as_ref(),
            Ok(&code)
        );
    }

    // Any factor, seen from any day: a date with that very factor, or a refusal.
    let around = START.checked_add(time::Duration::days(
        i64::from(input.around_offset) % 100_000,
    ));
    if let Some(around) = around {
        match factor_date(input.factor, around) {
            Ok(date) => assert_eq!(due_date_factor(date), Ok(input.factor)),
            Err(e) => {
                assert_eq!(e, BoletoError::FactorOutOfRange);
                assert!(!(1000..=9999).contains(&input.factor));
            }
        }
    }
});
