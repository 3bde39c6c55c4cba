//! EMV merchant-presented BR Codes (Banco Central's BR Code manual): building them for
//! charges and static QR codes, and reading them back.

/// CRC16/CCITT-FALSE: polynomial 0x1021, initial 0xFFFF, no reflection, no final XOR.
pub fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0xFFFF;
    for byte in data {
        crc ^= u16::from(*byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// The largest amount a BR Code carries: field 54 holds at most 13 characters,
/// `9999999999.99`. Charges and static codes refuse larger values before encoding, and
/// the sandbox's payments too: so far below `i64::MAX` that no number of payments can
/// overflow a balance.
pub const MAX_AMOUNT_CENTS: i64 = 999_999_999_999;

fn field(id: &str, value: &str) -> String {
    format!("{id}{:02}{value}", value.len())
}

/// Keeps the characters the BR Code allows in names and cities (ASCII, no accents) and
/// cuts to `max`.
fn plain(text: &str, max: usize) -> String {
    let folded: String = text
        .chars()
        .map(|c| match c {
            'á' | 'à' | 'â' | 'ã' | 'ä' => 'a',
            'Á' | 'À' | 'Â' | 'Ã' | 'Ä' => 'A',
            'é' | 'ê' | 'è' => 'e',
            'É' | 'Ê' | 'È' => 'E',
            'í' | 'ì' => 'i',
            'Í' | 'Ì' => 'I',
            'ó' | 'ô' | 'õ' | 'ò' => 'o',
            'Ó' | 'Ô' | 'Õ' | 'Ò' => 'O',
            'ú' | 'ü' | 'ù' => 'u',
            'Ú' | 'Ü' | 'Ù' => 'U',
            'ç' => 'c',
            'Ç' => 'C',
            c if c.is_ascii_graphic() || c == ' ' => c,
            _ => ' ',
        })
        .collect();
    folded.trim().chars().take(max).collect()
}

/// What a BR Code carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrCode {
    /// `true`: point of initiation `12`, single use (a charge); `false`: `11` (static).
    pub single_use: bool,
    pub pix_key: String,
    /// Centavos, `1..=MAX_AMOUNT_CENTS`; `None` lets the payer type the value.
    pub amount: Option<i64>,
    pub merchant_name: String,
    pub merchant_city: String,
    /// The txid (`***` when none).
    pub txid: String,
    pub description: Option<String>,
}

impl BrCode {
    /// The payload, with its CRC.
    pub fn encode(&self) -> String {
        let mut account = field("00", "br.gov.bcb.pix") + &field("01", &self.pix_key);
        if let Some(d) = &self.description {
            // The merchant account field holds at most 99 characters.
            let room = 99usize.saturating_sub(account.len() + 4);
            let d = plain(d, room);
            if !d.is_empty() {
                account += &field("02", &d);
            }
        }
        let mut payload = field("00", "01");
        payload += &field("01", if self.single_use { "12" } else { "11" });
        payload += &field("26", &account);
        payload += &field("52", "0000");
        payload += &field("53", "986");
        if let Some(amount) = self.amount {
            payload += &field("54", &format!("{}.{:02}", amount / 100, amount % 100));
        }
        payload += &field("58", "BR");
        payload += &field("59", &plain(&self.merchant_name, 25));
        payload += &field("60", &plain(&self.merchant_city, 15));
        payload += &field("62", &field("05", &self.txid));
        payload += "6304";
        let crc = crc16(payload.as_bytes());
        format!("{payload}{crc:04X}")
    }
}

/// The payload drawn as a QR code, as PNG bytes (at least 300 px wide).
pub fn qr_png(payload: &str) -> Result<Vec<u8>, String> {
    let code = qrcode::QrCode::with_error_correction_level(payload.as_bytes(), qrcode::EcLevel::M)
        .map_err(|e| e.to_string())?;
    let image = code
        .render::<image::Luma<u8>>()
        .min_dimensions(300, 300)
        .build();
    let mut png = Vec::new();
    image
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .map_err(|e| e.to_string())?;
    Ok(png)
}

/// The top-level fields of a payload, in order, after checking its CRC.
pub fn decode(payload: &str) -> Result<Vec<(String, String)>, String> {
    let cut = payload.len().checked_sub(4).ok_or("too short")?;
    // `get`, not `split_at`: the cut may fall inside a character of a garbled payload.
    let (Some(body), Some(crc)) = (payload.get(..cut), payload.get(cut..)) else {
        return Err("the CRC must be four hexadecimal digits".into());
    };
    if !body.ends_with("6304") {
        return Err("the CRC field 63 must come last".into());
    }
    let expected = format!("{:04X}", crc16(body.as_bytes()));
    if crc != expected {
        return Err(format!("CRC {crc} is wrong, expected {expected}"));
    }
    tlv(&body[..body.len() - 4])
}

/// Splits ID(2) LEN(2) VALUE fields.
pub fn tlv(mut text: &str) -> Result<Vec<(String, String)>, String> {
    let mut fields = Vec::new();
    while !text.is_empty() {
        let head = text
            .get(..4)
            .ok_or_else(|| format!("truncated field at {text:?}"))?;
        // ID and length are two decimal digits each: `str::parse` alone would also take
        // a sign (`+5`) and the ID could be anything.
        if !head.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("field ID and length must be digits at {text:?}"));
        }
        let id = &head[..2];
        let len = head[2..]
            .bytes()
            .fold(0, |n, b| n * 10 + usize::from(b - b'0'));
        let value = text
            .get(4..4 + len)
            .ok_or_else(|| format!("field {id} is shorter than {len}"))?;
        fields.push((id.to_owned(), value.to_owned()));
        text = &text[4 + len..];
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_vector_from_the_standard() {
        assert_eq!(crc16(b"123456789"), 0x29B1);
    }

    fn sample() -> BrCode {
        BrCode {
            single_use: true,
            pix_key: "natal@empresa.com.br".into(),
            amount: Some(12_345),
            merchant_name: "Campanhas São João e Associados".into(),
            merchant_city: "São Paulo da Serra Grande".into(),
            txid: "a1b2c3d4e5f6a1b2c3d4e5f6ab".into(),
            description: None,
        }
    }

    #[test]
    fn a_charge_code_decodes_back_field_by_field() {
        let payload = sample().encode();
        let fields = decode(&payload).unwrap();
        let get = |id: &str| {
            fields
                .iter()
                .find(|(k, _)| k == id)
                .map(|(_, v)| v.as_str())
                .unwrap()
        };
        assert_eq!(fields[0], ("00".into(), "01".into()));
        assert_eq!(get("01"), "12");
        let account = tlv(get("26")).unwrap();
        assert_eq!(account[0], ("00".into(), "br.gov.bcb.pix".into()));
        assert_eq!(account[1], ("01".into(), "natal@empresa.com.br".into()));
        assert_eq!(get("52"), "0000");
        assert_eq!(get("53"), "986");
        assert_eq!(get("54"), "123.45");
        assert_eq!(get("58"), "BR");
        assert_eq!(get("59"), "Campanhas Sao Joao e Asso");
        assert_eq!(get("59").len(), 25);
        assert_eq!(get("60"), "Sao Paulo da Se");
        assert_eq!(
            tlv(get("62")).unwrap(),
            [("05".into(), "a1b2c3d4e5f6a1b2c3d4e5f6ab".into())]
        );
    }

    #[test]
    fn a_static_code_without_amount_and_a_tampered_code() {
        let code = BrCode {
            single_use: false,
            amount: None,
            txid: "***".into(),
            ..sample()
        };
        let payload = code.encode();
        let fields = decode(&payload).unwrap();
        assert!(fields.iter().all(|(id, _)| id != "54"));
        assert_eq!(fields[1].1, "11");
        let tampered = payload.replacen("BR", "US", 1);
        assert!(decode(&tampered).unwrap_err().contains("CRC"));
    }

    #[test]
    fn the_largest_amount_fills_field_54() {
        // The br_code_round_trip fuzz target wrote 3834029160418063669 centavos as a
        // 20-character field 54; charges and static codes now stop at this maximum.
        let payload = BrCode {
            amount: Some(MAX_AMOUNT_CENTS),
            ..sample()
        }
        .encode();
        let fields = decode(&payload).unwrap();
        let amount = fields.iter().find(|(id, _)| id == "54").unwrap();
        assert_eq!(amount.1, "9999999999.99");
    }

    #[test]
    fn a_payload_ending_inside_a_character_is_refused() {
        // Found by the br_code_decode fuzz target: the CRC cut four bytes from the end
        // fell inside `\u{35c}` and `split_at` panicked.
        assert!(decode("000002c22\u{35c}22c").is_err());
        assert!(decode("é63").is_err());
    }

    #[test]
    fn ids_and_lengths_are_two_digits() {
        // Found by the br_code_decode fuzz target: any two characters passed as an ID,
        // and a length like `+5` was read as 5, so fields did not write back the same.
        assert!(tlv("z0011").is_err());
        assert!(tlv("00+5abcde").is_err());
        assert!(tlv("0é01x").is_err());
        assert!(tlv("0001").is_err());
        assert_eq!(
            tlv("0002ab9900").unwrap(),
            [("00".into(), "ab".into()), ("99".into(), String::new())]
        );
    }

    #[test]
    fn the_static_example_of_the_bcb_manual() {
        // Published in Banco Central's BR Code manual, CRC 1D3D included; that example
        // omits the optional field 01, which our encoder always writes.
        let published = "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D";
        assert!(decode(published).is_ok());
        let code = BrCode {
            single_use: false,
            pix_key: "123e4567-e12b-12d1-a456-426655440000".into(),
            amount: None,
            merchant_name: "Fulano de Tal".into(),
            merchant_city: "BRASILIA".into(),
            txid: "***".into(),
            description: None,
        };
        let ours = code.encode();
        let without_field_01 = ours.replacen("010211", "", 1);
        let body = &without_field_01[..without_field_01.len() - 4];
        assert_eq!(format!("{body}{:04X}", crc16(body.as_bytes())), published);
    }
}
