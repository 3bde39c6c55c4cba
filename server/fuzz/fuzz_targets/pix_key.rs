//! `PixKey::parse(kind, value)` and `PixKey::detect(value)` on any text: never panic;
//! a key that parses is canonical (parsing it again, with its own type or by detection,
//! gives the same key), within 77 characters, in the shape of its type; detection agrees
//! with parsing by the detected type.
#![no_main]

use arbitrary::Arbitrary;
use cofre_fuzz::service::pix_key::{PixKey, PixKeyError, PixKeyType};
use cofre_fuzz::service::tax_id::TaxId;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    kind: u8,
    value: &'a str,
}

fn check_canonical(key: &PixKey) {
    let value = key.as_str();
    assert!(value.chars().count() <= 77, "{value:?} is longer than 77");
    assert_eq!(value.trim(), value);
    match key.kind() {
        PixKeyType::Cpf => assert!(matches!(TaxId::parse(value), Ok(TaxId::Cpf(s)) if s == value)),
        PixKeyType::Cnpj => {
            assert!(matches!(TaxId::parse(value), Ok(TaxId::Cnpj(s)) if s == value))
        }
        PixKeyType::Email => {
            assert_eq!(value.matches('@').count(), 1, "{value:?}");
            assert!(!value.chars().any(char::is_uppercase), "{value:?}");
        }
        PixKeyType::Phone => {
            let number = value.strip_prefix('+').expect("E.164 starts with +");
            assert!((2..=15).contains(&number.len()));
            assert!(number.bytes().all(|b| b.is_ascii_digit()));
            assert!(!number.starts_with('0'));
        }
        PixKeyType::Evp => {
            assert_eq!(value.len(), 36);
            assert!(
                value
                    .bytes()
                    .all(|b| b == b'-' || b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            );
        }
    }
    // Idempotent: the stored form parses to itself, with its type and by detection
    // (lookups by path parameter detect the type).
    assert_eq!(PixKey::parse(key.kind(), value).as_ref(), Ok(key));
    assert_eq!(PixKey::detect(value).as_ref(), Ok(key), "detect({value:?})");
}

fuzz_target!(|input: Input<'_>| {
    let kind = PixKeyType::ALL[usize::from(input.kind) % PixKeyType::ALL.len()];
    assert_eq!(PixKeyType::parse(kind.as_str()), Some(kind));
    assert_eq!(PixKeyType::parse(&kind.as_str().to_lowercase()), Some(kind));

    match PixKey::parse(kind, input.value) {
        Ok(key) => {
            assert_eq!(key.kind(), kind);
            check_canonical(&key);
        }
        Err(PixKeyError::Invalid(k)) => assert_eq!(k, kind),
        Err(PixKeyError::TooLong) => assert!(input.value.trim().chars().count() > 77),
        Err(PixKeyError::Unrecognised) => panic!("parse with a type never says Unrecognised"),
    }

    if let Ok(key) = PixKey::detect(input.value) {
        assert_eq!(PixKey::parse(key.kind(), input.value).as_ref(), Ok(&key));
        check_canonical(&key);
    }
});
