//! The text parts and the file of an upload form, as `http/files.rs` reads them: the
//! `purpose` part (at most 256 bytes of UTF-8, then `Purpose::from_part`), the client's
//! file name (`stored_name`) and the kind read from the file's first and last bytes
//! (`sniff`). Never panic; a purpose is accepted exactly when the trimmed text is one of
//! the four names; a stored name is a single safe segment; a sniffed kind has its
//! signature.
#![no_main]

use arbitrary::Arbitrary;
use cofre_fuzz::service::files::form::{Kind, Purpose, PurposeError, sniff, stored_name};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    purpose: Option<&'a [u8]>,
    file_name: Option<&'a str>,
    head: &'a [u8],
    tail: &'a [u8],
}

fuzz_target!(|input: Input<'_>| {
    // http/files.rs `small_text`: more than 256 bytes or invalid UTF-8 never reach the
    // parser; the rest does.
    let text = input
        .purpose
        .filter(|p| p.len() <= 256)
        .map(std::str::from_utf8);
    let text = match text {
        Some(Err(_)) => None,
        Some(Ok(t)) => Some(Some(t)),
        None => Some(None),
    };
    if let Some(part) = text {
        match Purpose::from_part(part) {
            Ok(p) => {
                assert_eq!(Some(p.as_str()), part.map(str::trim));
                assert_eq!(Purpose::parse(p.as_str()), Some(p));
            }
            Err(PurposeError::Missing) => assert!(part.is_none_or(|t| t.trim().is_empty())),
            Err(PurposeError::Unknown) => {
                let trimmed = part.expect("present").trim();
                assert!(!trimmed.is_empty());
                assert!(Purpose::ALL.iter().all(|p| p.as_str() != trimmed));
            }
        }
    }

    let name = stored_name(input.file_name);
    assert!(!name.is_empty());
    assert!(name.chars().count() <= 255);
    assert_eq!(name.trim(), name);
    assert!(!name.contains(['/', '\\']), "{name:?}");
    assert!(!name.chars().any(char::is_control), "{name:?}");

    if let Some(kind) = sniff(input.head, input.tail) {
        let signature: &[u8] = match kind {
            Kind::Pdf => b"%PDF",
            Kind::Png => b"\x89PNG",
            Kind::Jpeg => b"\xFF\xD8\xFF",
        };
        assert!(input.head.starts_with(signature), "{kind:?}");
        assert!(!kind.content_type().is_empty());
    }
});
