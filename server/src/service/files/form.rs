//! What the parts of an upload form mean: the `purpose` text, the file's name and the
//! kind read from its bytes. Pure functions with no I/O and no dependency on the rest of
//! the service (only `infer`), so that the fuzz targets in `server/fuzz` compile this
//! very file on its own.

/// Why a file was uploaded; a `fileId` is usable only for its own purpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    AccountRegisterDocument,
    DisputeEvidence,
    LimitIncreaseRequest,
    KycDocument,
}

/// Why a `purpose` part was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PurposeError {
    /// No `purpose` part, or only whitespace.
    Missing,
    /// Not one of [`Purpose::ALL`], spelt exactly.
    Unknown,
}

impl Purpose {
    pub const ALL: [Purpose; 4] = [
        Purpose::AccountRegisterDocument,
        Purpose::DisputeEvidence,
        Purpose::LimitIncreaseRequest,
        Purpose::KycDocument,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::AccountRegisterDocument => "ACCOUNT_REGISTER_DOCUMENT",
            Purpose::DisputeEvidence => "DISPUTE_EVIDENCE",
            Purpose::LimitIncreaseRequest => "LIMIT_INCREASE_REQUEST",
            Purpose::KycDocument => "KYC_DOCUMENT",
        }
    }

    /// A purpose by its exact name; surrounding whitespace is ignored, case is not.
    pub fn parse(value: &str) -> Option<Purpose> {
        Purpose::ALL
            .into_iter()
            .find(|p| p.as_str() == value.trim())
    }

    /// The `purpose` part of an upload form (absent when the form had none).
    pub fn from_part(part: Option<&str>) -> Result<Purpose, PurposeError> {
        match part.map(str::trim).filter(|p| !p.is_empty()) {
            None => Err(PurposeError::Missing),
            Some(p) => Purpose::parse(p).ok_or(PurposeError::Unknown),
        }
    }
}

/// The name a file is kept under: the last segment of the client's file name (either
/// slash), without control characters, at most 255 characters, trimmed; `file` when
/// nothing is left.
pub fn stored_name(client_name: Option<&str>) -> String {
    client_name
        .map(|n| n.rsplit(['/', '\\']).next().unwrap_or_default())
        .map(|n| {
            n.chars()
                .filter(|c| !c.is_control())
                .take(255)
                .collect::<String>()
        })
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "file".to_owned())
}

/// The kinds of document Cofre accepts, recognised by their bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Pdf,
    Png,
    Jpeg,
}

impl Kind {
    pub fn content_type(self) -> &'static str {
        match self {
            Kind::Pdf => "application/pdf",
            Kind::Png => "image/png",
            Kind::Jpeg => "image/jpeg",
        }
    }
}

/// How many bytes of the start and of the end of a file [`sniff`] looks at.
pub const HEAD: usize = 64;
pub const TAIL: usize = 1024;

/// The kind of a complete file from its first and last bytes: the signature must be
/// one of the three, and the file must end the way a whole file of that kind ends (a
/// PDF's `%%EOF`, a PNG's IEND chunk, a JPEG's end-of-image marker), so that truncated
/// uploads are refused too.
pub fn sniff(head: &[u8], tail: &[u8]) -> Option<Kind> {
    let kind = match infer::get(head)?.mime_type() {
        "application/pdf" => Kind::Pdf,
        "image/png" => Kind::Png,
        "image/jpeg" => Kind::Jpeg,
        _ => return None,
    };
    let trimmed = {
        let end = tail
            .iter()
            .rposition(|b| !matches!(b, b'\r' | b'\n' | b' ' | b'\t' | 0))
            .map_or(0, |i| i + 1);
        &tail[..end]
    };
    let whole = match kind {
        Kind::Pdf => tail.windows(5).any(|w| w == b"%%EOF"),
        Kind::Png => trimmed.ends_with(&[0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]),
        Kind::Jpeg => trimmed.ends_with(&[0xFF, 0xD9]),
    };
    whole.then_some(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG_END: [u8; 12] = [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82];

    #[test]
    fn whole_files_of_the_three_kinds_are_recognised() {
        let pdf = b"%PDF-1.7\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n";
        assert_eq!(sniff(pdf, pdf), Some(Kind::Pdf));
        let mut png = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13];
        png.extend_from_slice(b"IHDR");
        png.extend_from_slice(&PNG_END);
        assert_eq!(sniff(&png, &png), Some(Kind::Png));
        let jpeg = [
            0xFF, 0xD8, 0xFF, 0xE0, 0, 16, b'J', b'F', b'I', b'F', 0, 0xFF, 0xD9,
        ];
        assert_eq!(sniff(&jpeg, &jpeg), Some(Kind::Jpeg));
    }

    #[test]
    fn truncated_files_and_other_kinds_are_refused() {
        let truncated = b"%PDF-1.7\n1 0 obj\n<<>>\nendobj\n";
        assert_eq!(sniff(truncated, truncated), None);
        let elf = b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00";
        assert_eq!(sniff(elf, elf), None);
        let exe = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00";
        assert_eq!(sniff(exe, exe), None);
        let jpeg_cut = [
            0xFF, 0xD8, 0xFF, 0xE0, 0, 16, b'J', b'F', b'I', b'F', 0, 1, 2,
        ];
        assert_eq!(sniff(&jpeg_cut, &jpeg_cut), None);
        assert_eq!(sniff(b"", b""), None);
        assert_eq!(sniff(b"hello, world", b"hello, world"), None);
    }

    #[test]
    fn purposes_round_trip_and_unknown_ones_are_refused() {
        for p in Purpose::ALL {
            assert_eq!(Purpose::parse(p.as_str()), Some(p));
            assert_eq!(
                Purpose::from_part(Some(&format!(" {}\n", p.as_str()))),
                Ok(p)
            );
        }
        assert_eq!(Purpose::parse("dispute_evidence"), None);
        assert_eq!(Purpose::parse("SELFIE"), None);
        assert_eq!(Purpose::from_part(None), Err(PurposeError::Missing));
        assert_eq!(Purpose::from_part(Some(" \t")), Err(PurposeError::Missing));
        assert_eq!(
            Purpose::from_part(Some("SELFIE")),
            Err(PurposeError::Unknown)
        );
    }

    #[test]
    fn stored_names_keep_the_last_segment_without_control_characters() {
        assert_eq!(stored_name(Some("C:\\docs\\rg.pdf")), "rg.pdf");
        assert_eq!(stored_name(Some("../../etc/passwd")), "passwd");
        assert_eq!(stored_name(Some("a\u{0}b\r\n.png")), "ab.png");
        assert_eq!(stored_name(Some("dir/")), "file");
        assert_eq!(stored_name(Some("  ")), "file");
        assert_eq!(stored_name(None), "file");
        assert_eq!(stored_name(Some(&"é".repeat(300))).chars().count(), 255);
    }
}
