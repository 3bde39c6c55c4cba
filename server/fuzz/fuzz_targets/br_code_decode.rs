//! `br_code::decode` and `br_code::tlv` on any text: never panic; fields read by `tlv`
//! written back (two-digit ID, two-digit length, value) give the very same text, and a payload that
//! `decode` accepts is its fields followed by a correct CRC field.
#![no_main]

use cofre_fuzz::service::br_code::{crc16, decode, tlv};
use libfuzzer_sys::fuzz_target;

fn write(fields: &[(String, String)]) -> String {
    fields
        .iter()
        .map(|(id, value)| format!("{id}{:02}{value}", value.len()))
        .collect()
}

fuzz_target!(|text: &str| {
    if let Ok(fields) = tlv(text) {
        for (id, value) in &fields {
            assert!(
                id.len() == 2 && id.bytes().all(|b| b.is_ascii_digit()),
                "field ID {id:?} in {text:?}"
            );
            assert!(value.len() <= 99);
        }
        assert_eq!(write(&fields), text, "tlv does not round-trip");
    }
    if let Ok(fields) = decode(text) {
        let body = format!("{}6304", write(&fields));
        assert_eq!(format!("{body}{:04X}", crc16(body.as_bytes())), text);
    }
});
