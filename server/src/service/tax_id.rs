//! Brazilian tax ids: CPF (individuals) and CNPJ (companies, numeric or alphanumeric).
//!
//! Parse, don't validate: once a value is a [`TaxId`] its check digits are right and it
//! is stored in its canonical form (digits and capital letters only, no punctuation).
//! The alphanumeric CNPJ follows Receita Federal IN 2229/2024 (see DOMAIN.md).

use std::fmt;

/// A CPF or a CNPJ with valid check digits, in canonical form.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TaxId {
    Cpf(String),
    Cnpj(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TaxIdError {
    #[error("tax id must have 11 (CPF) or 14 (CNPJ) characters")]
    Length,
    #[error("tax id has characters that are not allowed")]
    Characters,
    #[error("tax id check digits are wrong")]
    CheckDigits,
}

impl TaxId {
    /// Parses a CPF or CNPJ, with or without punctuation (`.`, `-`, `/`, spaces).
    pub fn parse(input: &str) -> Result<Self, TaxIdError> {
        let canonical: String = input
            .chars()
            .filter(|c| !matches!(c, '.' | '-' | '/' | ' '))
            .map(|c| c.to_ascii_uppercase())
            .collect();
        // Checked before the length: the length is counted in bytes, and the CPF/CNPJ
        // readers slice at fixed byte positions, which only ASCII makes safe.
        if !canonical.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(TaxIdError::Characters);
        }
        match canonical.len() {
            11 => parse_cpf(&canonical).map(TaxId::Cpf),
            14 => parse_cnpj(&canonical).map(TaxId::Cnpj),
            _ => Err(TaxIdError::Length),
        }
    }

    /// Parses a value that must be a CNPJ.
    pub fn parse_cnpj(input: &str) -> Result<Self, TaxIdError> {
        match Self::parse(input)? {
            cnpj @ TaxId::Cnpj(_) => Ok(cnpj),
            TaxId::Cpf(_) => Err(TaxIdError::Length),
        }
    }

    /// Canonical form: digits (and, for CNPJ, capital letters) without punctuation.
    pub fn as_str(&self) -> &str {
        match self {
            TaxId::Cpf(s) | TaxId::Cnpj(s) => s,
        }
    }

    /// The display form with punctuation: `111.444.777-35` or `12.ABC.345/01DE-35`.
    pub fn formatted(&self) -> String {
        match self {
            TaxId::Cpf(s) => format!("{}.{}.{}-{}", &s[0..3], &s[3..6], &s[6..9], &s[9..11]),
            TaxId::Cnpj(s) => format!(
                "{}.{}.{}/{}-{}",
                &s[0..2],
                &s[2..5],
                &s[5..8],
                &s[8..12],
                &s[12..14]
            ),
        }
    }

    /// The display form with the middle hidden, as lookups show a key's owner:
    /// `111.***.***-35`, `11.***.***/0001-81`.
    pub fn masked(&self) -> String {
        match self {
            TaxId::Cpf(s) => format!("{}.***.***-{}", &s[0..3], &s[9..11]),
            TaxId::Cnpj(s) => format!("{}.***.***/{}-{}", &s[0..2], &s[8..12], &s[12..14]),
        }
    }

    pub fn is_cnpj(&self) -> bool {
        matches!(self, TaxId::Cnpj(_))
    }
}

impl fmt::Display for TaxId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.formatted())
    }
}

fn parse_cpf(s: &str) -> Result<String, TaxIdError> {
    if !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(TaxIdError::Characters);
    }
    let digits: Vec<u32> = s.bytes().map(|b| u32::from(b - b'0')).collect();
    // Sequences like 000.000.000-00 pass the arithmetic but are not issued.
    if digits.iter().all(|d| *d == digits[0]) {
        return Err(TaxIdError::CheckDigits);
    }
    let check = |len: usize| {
        let sum: u32 = (0..len)
            .map(|i| digits[i] * (len as u32 + 1 - i as u32))
            .sum();
        let rest = sum % 11;
        if rest < 2 { 0 } else { 11 - rest }
    };
    if check(9) == digits[9] && check(10) == digits[10] {
        Ok(s.to_owned())
    } else {
        Err(TaxIdError::CheckDigits)
    }
}

/// Check digits of a CNPJ base (12 characters `0-9A-Z`); each character is worth its
/// ASCII code minus 48, so the numeric CNPJ is the special case of the alphanumeric one.
pub fn cnpj_check_digits(base: &str) -> Option<[u8; 2]> {
    if base.len() != 12
        || !base
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
    {
        return None;
    }
    let mut values: Vec<u32> = base.bytes().map(|b| u32::from(b - b'0')).collect();
    let digit = |values: &[u32]| {
        let n = values.len();
        let sum: u32 = values
            .iter()
            .enumerate()
            .map(|(i, v)| v * ((n - i - 1) % 8 + 2) as u32)
            .sum();
        let rest = sum % 11;
        if rest < 2 { 0 } else { 11 - rest }
    };
    let first = digit(&values);
    values.push(first);
    let second = digit(&values);
    Some([first as u8, second as u8])
}

fn parse_cnpj(s: &str) -> Result<String, TaxIdError> {
    let (base, check) = s.split_at(12);
    if !check.bytes().all(|b| b.is_ascii_digit()) {
        return Err(TaxIdError::Characters);
    }
    let expected = cnpj_check_digits(base).ok_or(TaxIdError::Characters)?;
    if base.bytes().all(|b| b == b'0') {
        return Err(TaxIdError::CheckDigits);
    }
    let given = [check.as_bytes()[0] - b'0', check.as_bytes()[1] - b'0'];
    if given == expected {
        Ok(s.to_owned())
    } else {
        Err(TaxIdError::CheckDigits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alphanumeric_cnpj_vector_from_receita_federal() {
        assert_eq!(cnpj_check_digits("12ABC34501DE"), Some([3, 5]));
        let id = TaxId::parse("12.ABC.345/01DE-35").unwrap();
        assert_eq!(id.as_str(), "12ABC34501DE35");
        assert_eq!(id.formatted(), "12.ABC.345/01DE-35");
    }

    #[test]
    fn numeric_cnpj_vector() {
        assert_eq!(cnpj_check_digits("112223330001"), Some([8, 1]));
        assert!(TaxId::parse("11.222.333/0001-81").unwrap().is_cnpj());
        assert_eq!(
            TaxId::parse("11.222.333/0001-82"),
            Err(TaxIdError::CheckDigits)
        );
    }

    #[test]
    fn lowercase_alphanumeric_cnpj_is_canonicalised() {
        assert_eq!(
            TaxId::parse("12abc34501de35").unwrap().as_str(),
            "12ABC34501DE35"
        );
    }

    #[test]
    fn masked_forms_hide_the_middle() {
        assert_eq!(
            TaxId::parse("11144477735").unwrap().masked(),
            "111.***.***-35"
        );
        assert_eq!(
            TaxId::parse("11222333000181").unwrap().masked(),
            "11.***.***/0001-81"
        );
    }

    #[test]
    fn cpf_check_digits() {
        assert_eq!(
            TaxId::parse("111.444.777-35").unwrap(),
            TaxId::Cpf("11144477735".into())
        );
        assert_eq!(TaxId::parse("111.444.777-36"), Err(TaxIdError::CheckDigits));
        assert_eq!(TaxId::parse("000.000.000-00"), Err(TaxIdError::CheckDigits));
        assert_eq!(TaxId::parse("1114447773A"), Err(TaxIdError::Characters));
    }

    #[test]
    fn wrong_lengths_and_letters_in_check_digits() {
        assert_eq!(TaxId::parse("123"), Err(TaxIdError::Length));
        assert_eq!(TaxId::parse("12ABC34501DE3A"), Err(TaxIdError::Characters));
        assert_eq!(TaxId::parse_cnpj("111.444.777-35"), Err(TaxIdError::Length));
        assert_eq!(TaxId::parse("00000000000000"), Err(TaxIdError::CheckDigits));
    }

    #[test]
    fn non_ascii_characters_are_refused_not_sliced() {
        // Found by the tax_id fuzz target: 14 bytes with a multi-byte character across
        // byte 12 made the CNPJ reader split inside the character and panic.
        assert_eq!(
            TaxId::parse("0000000000\u{8a28}0"),
            Err(TaxIdError::Characters)
        );
        assert_eq!(TaxId::parse("00000000000ş0"), Err(TaxIdError::Characters));
        assert_eq!(TaxId::parse("111.444.777-3ş"), Err(TaxIdError::Characters));
        // Digits of other scripts are not CPF digits.
        assert_eq!(TaxId::parse("١١١٤٤٤٧٧٧٣٥"), Err(TaxIdError::Characters));
    }
}
