//! `TaxId::parse` on any text: never panics, agrees with an independent reading of the
//! CPF/CNPJ rules, and what it accepts comes back unchanged from its canonical, formatted
//! and masked forms.
#![no_main]

use cofre_fuzz::reference;
use cofre_fuzz::service::tax_id::{TaxId, TaxIdError, cnpj_check_digits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &str| {
    let parsed = TaxId::parse(input);
    assert_eq!(
        parsed.as_ref().ok().map(TaxId::as_str),
        reference::tax_id(input).as_deref(),
        "disagrees with the reference on {input:?}"
    );
    match &parsed {
        Ok(id) => {
            let canonical = id.as_str();
            let expected_len = if id.is_cnpj() { 14 } else { 11 };
            assert_eq!(canonical.len(), expected_len);
            assert!(
                canonical
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (id.is_cnpj() && b.is_ascii_uppercase()))
            );
            // parse(format(x)) == x, for every form the server shows.
            assert_eq!(TaxId::parse(canonical).as_ref(), Ok(id));
            assert_eq!(TaxId::parse(&id.formatted()).as_ref(), Ok(id));
            assert_eq!(id.to_string(), id.formatted());
            let masked = id.masked();
            assert!(masked.contains("***"));
            assert!(masked.ends_with(&canonical[expected_len - 2..]));
            assert_eq!(TaxId::parse_cnpj(input).is_ok(), id.is_cnpj());
            if id.is_cnpj() {
                let digits = cnpj_check_digits(&canonical[..12]).expect("a valid base");
                let given = [
                    canonical.as_bytes()[12] - b'0',
                    canonical.as_bytes()[13] - b'0',
                ];
                assert_eq!(digits, given);
            }
        }
        Err(err) => {
            assert!(TaxId::parse_cnpj(input).is_err());
            if *err == TaxIdError::Length {
                let kept = input
                    .chars()
                    .filter(|c| !matches!(c, '.' | '-' | '/' | ' '))
                    .collect::<String>()
                    .to_ascii_uppercase();
                assert!(kept.len() != 11 && kept.len() != 14);
            }
        }
    }
});
