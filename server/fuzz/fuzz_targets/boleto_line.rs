//! The boleto readers on any text: `barcode_from_typed_line`, `validate_barcode`,
//! `typed_line`, `format_typed_line`, `interleaved_2_of_5` and the check digits never
//! panic; a typed line that reads is the typed line of the barcode it reads as, in any
//! of its printed forms; a barcode that validates comes back from its typed line; the
//! check digits agree with an independent reading of the FEBRABAN rules.
#![no_main]

use cofre_fuzz::reference;
use cofre_fuzz::service::boleto::{
    BoletoError, barcode_from_typed_line, format_typed_line, interleaved_2_of_5, mod10, mod11,
    typed_line, validate_barcode,
};
use libfuzzer_sys::fuzz_target;

fn stripped(line: &str) -> String {
    line.chars()
        .filter(|c| *c != '.' && !c.is_whitespace())
        .collect()
}

fuzz_target!(|text: &str| {
    let digits_only = text.bytes().all(|b| b.is_ascii_digit());
    if digits_only {
        assert_eq!(mod10(text), reference::mod10(text), "mod10({text:?})");
        assert_eq!(mod11(text), reference::mod11(text), "mod11({text:?})");
    }
    assert!(mod10(text) <= 9);
    assert!((1..=9).contains(&mod11(text)));

    match barcode_from_typed_line(text) {
        Ok(barcode) => {
            assert_eq!(validate_barcode(&barcode), Ok(()));
            let line = typed_line(&barcode).expect("a valid barcode has a typed line");
            assert_eq!(line, stripped(text));
            let printed = format_typed_line(text);
            assert_eq!(printed.len(), 54);
            assert_eq!(barcode_from_typed_line(&printed).as_ref(), Ok(&barcode));
        }
        Err(BoletoError::Length | BoletoError::NotDigits) => {
            let s = stripped(text);
            assert!(s.len() != 47 || !s.bytes().all(|b| b.is_ascii_digit()));
            assert_eq!(format_typed_line(text), text);
        }
        Err(BoletoError::CheckDigit { field }) => assert!((1..=4).contains(&field)),
        Err(other) => panic!("a typed line cannot fail with {other:?}"),
    }

    match validate_barcode(text) {
        Ok(()) => {
            assert_eq!(text.len(), 44);
            let without_check = format!("{}{}", &text[..4], &text[5..]);
            assert_eq!(text.as_bytes()[4] - b'0', reference::mod11(&without_check));
            let line = typed_line(text).unwrap();
            assert_eq!(line.len(), 47);
            assert_eq!(barcode_from_typed_line(&line).as_deref(), Ok(text));
            let modules = interleaved_2_of_5(text).unwrap();
            assert_eq!(modules.len(), 4 + 22 * 18 + 5);
        }
        Err(e) => assert_eq!(typed_line(text), Err(e)),
    }

    match interleaved_2_of_5(text) {
        Ok(modules) => {
            assert!(digits_only && text.len() % 2 == 0);
            // Each digit has two wide (3 modules) and three narrow elements: 9 modules.
            assert_eq!(modules.len(), 4 + text.len() * 9 + 5);
        }
        Err(_) => assert!(!digits_only || text.len() % 2 == 1),
    }
});
