//! `BrCode::encode` then `br_code::decode`, for every key the server can hold and any
//! names, amounts, txids and descriptions: the payload decodes, each field says what was
//! encoded (names and cities folded to the allowed characters and cut), every field
//! fits its length, and the payload stays within the 512 characters of an EMV code.
#![no_main]

use arbitrary::Arbitrary;
use cofre_fuzz::service::br_code::{BrCode, MAX_AMOUNT_CENTS, decode, tlv};
use cofre_fuzz::service::pix_key::{PixKey, PixKeyType};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    single_use: bool,
    key_kind: u8,
    key: &'a str,
    /// Charges and static codes take `1..=MAX_AMOUNT_CENTS`, or none (static codes).
    amount: Option<i64>,
    merchant_name: &'a str,
    merchant_city: &'a str,
    txid: Txid,
    description: Option<&'a str>,
}

/// The txids the server writes: a charge's 32 hex characters, a static code's 25
/// lowercase alphanumerics, or `***`.
#[derive(Arbitrary, Debug)]
enum Txid {
    Charge([u8; 16]),
    Static([u8; 25]),
    None,
}

impl Txid {
    fn text(&self) -> String {
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        match self {
            Txid::Charge(bytes) => bytes.iter().map(|b| format!("{b:02x}")).collect(),
            Txid::Static(bytes) => bytes
                .iter()
                .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
                .collect(),
            Txid::None => "***".into(),
        }
    }
}

fn field<'f>(fields: &'f [(String, String)], id: &str) -> Option<&'f str> {
    fields
        .iter()
        .find(|(k, _)| k == id)
        .map(|(_, v)| v.as_str())
}

fuzz_target!(|input: Input<'_>| {
    // Only keys the server could have stored: canonical values of a type.
    let kind = PixKeyType::ALL[usize::from(input.key_kind) % PixKeyType::ALL.len()];
    let Ok(key) = PixKey::parse(kind, input.key) else {
        return;
    };
    if input
        .amount
        .is_some_and(|a| !(1..=MAX_AMOUNT_CENTS).contains(&a))
    {
        return;
    }
    let code = BrCode {
        single_use: input.single_use,
        pix_key: key.as_str().to_owned(),
        amount: input.amount,
        merchant_name: input.merchant_name.to_owned(),
        merchant_city: input.merchant_city.to_owned(),
        txid: input.txid.text(),
        description: input.description.map(str::to_owned),
    };
    let payload = code.encode();
    assert!(payload.is_ascii(), "{payload:?}");
    assert!(payload.len() <= 512, "{} characters", payload.len());
    let fields = decode(&payload).unwrap_or_else(|e| panic!("{e}: {payload:?}"));
    let ids: Vec<&str> = fields.iter().map(|(id, _)| id.as_str()).collect();
    let mut expected = vec!["00", "01", "26", "52", "53"];
    if input.amount.is_some() {
        expected.push("54");
    }
    expected.extend(["58", "59", "60", "62"]);
    assert_eq!(ids, expected);

    assert_eq!(field(&fields, "00"), Some("01"));
    let initiation = if input.single_use { "12" } else { "11" };
    assert_eq!(field(&fields, "01"), Some(initiation));
    let account = tlv(field(&fields, "26").unwrap()).unwrap();
    assert_eq!(account[0], ("00".into(), "br.gov.bcb.pix".into()));
    assert_eq!(account[1], ("01".into(), code.pix_key.clone()));
    match account.get(2) {
        Some((id, description)) => {
            assert_eq!(id, "02");
            assert!(!description.is_empty() && !description.starts_with(char::is_whitespace));
            let wanted = input.description.expect("a description was given");
            assert!(description.chars().count() <= wanted.chars().count());
        }
        None => assert_eq!(account.len(), 2),
    }
    if let Some(amount) = input.amount {
        // EMV: at most 13 characters, digits and one dot, two decimals.
        let text = field(&fields, "54").unwrap();
        assert!(text.len() <= 13, "amount {amount} written as {text:?}");
        let (units, cents) = text.split_once('.').expect("a decimal point");
        assert_eq!(cents.len(), 2);
        let back = units.parse::<i64>().unwrap() * 100 + cents.parse::<i64>().unwrap();
        assert_eq!(back, amount);
    }
    assert_eq!(field(&fields, "58"), Some("BR"));
    let name = field(&fields, "59").unwrap();
    let city = field(&fields, "60").unwrap();
    assert!(name.chars().count() <= 25 && city.chars().count() <= 15);
    assert_eq!(
        tlv(field(&fields, "62").unwrap()).unwrap(),
        [("05".into(), input.txid.text())]
    );
});
