//! Pix key values (DICT API 2.6): parsing and normalisation of each key type.

use std::fmt;

use super::tax_id::TaxId;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PixKeyType {
    Cpf,
    Cnpj,
    Email,
    Phone,
    /// Random key (UUID); called `RANDOM` in the withdraw key representation.
    Evp,
}

impl PixKeyType {
    pub const ALL: [PixKeyType; 5] = [
        PixKeyType::Cpf,
        PixKeyType::Cnpj,
        PixKeyType::Email,
        PixKeyType::Phone,
        PixKeyType::Evp,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PixKeyType::Cpf => "CPF",
            PixKeyType::Cnpj => "CNPJ",
            PixKeyType::Email => "EMAIL",
            PixKeyType::Phone => "PHONE",
            PixKeyType::Evp => "EVP",
        }
    }

    /// Accepts the directory's names and `RANDOM` (the withdraw key name of `EVP`).
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_uppercase().as_str() {
            "CPF" => Some(PixKeyType::Cpf),
            "CNPJ" => Some(PixKeyType::Cnpj),
            "EMAIL" => Some(PixKeyType::Email),
            "PHONE" => Some(PixKeyType::Phone),
            "EVP" | "RANDOM" => Some(PixKeyType::Evp),
            _ => None,
        }
    }
}

impl fmt::Display for PixKeyType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A key value in its canonical form, valid for its type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PixKey {
    value: String,
    kind: PixKeyType,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PixKeyError {
    #[error("the key is not a valid {0}")]
    Invalid(PixKeyType),
    #[error("a Pix key has at most 77 characters")]
    TooLong,
    #[error("the value is not a Pix key of any type")]
    Unrecognised,
}

impl PixKey {
    /// Parses `value` as a key of `kind`, normalising it: CPF/CNPJ without punctuation,
    /// email lowercased, phone as E.164 (`+55` added to a Brazilian number without it),
    /// EVP lowercased.
    pub fn parse(kind: PixKeyType, value: &str) -> Result<Self, PixKeyError> {
        let value = value.trim();
        if value.chars().count() > 77 {
            return Err(PixKeyError::TooLong);
        }
        let invalid = PixKeyError::Invalid(kind);
        let canonical = match kind {
            PixKeyType::Cpf => match TaxId::parse(value) {
                Ok(TaxId::Cpf(s)) => s,
                _ => return Err(invalid),
            },
            PixKeyType::Cnpj => match TaxId::parse(value) {
                Ok(TaxId::Cnpj(s)) => s,
                _ => return Err(invalid),
            },
            PixKeyType::Email => {
                let email = value.to_ascii_lowercase();
                if !is_dict_email(&email) {
                    return Err(invalid);
                }
                email
            }
            PixKeyType::Phone => {
                let digits: String = value
                    .chars()
                    .filter(|c| !matches!(c, ' ' | '-' | '(' | ')'))
                    .collect();
                let e164 = match digits.strip_prefix('+') {
                    Some(rest) => format!("+{rest}"),
                    // A Brazilian number (DDD + 8 or 9 digits) without the country code.
                    None if digits.len() == 10 || digits.len() == 11 => format!("+55{digits}"),
                    None => return Err(invalid),
                };
                let number = &e164[1..];
                let ok = (2..=15).contains(&number.len())
                    && number.bytes().all(|b| b.is_ascii_digit())
                    && !number.starts_with('0');
                if !ok {
                    return Err(invalid);
                }
                e164
            }
            PixKeyType::Evp => {
                let evp = value.to_ascii_lowercase();
                let groups: Vec<&str> = evp.split('-').collect();
                let ok = groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
                    && groups
                        .iter()
                        .all(|g| g.bytes().all(|b| b.is_ascii_hexdigit()));
                if !ok {
                    return Err(invalid);
                }
                evp
            }
        };
        Ok(Self {
            value: canonical,
            kind,
        })
    }

    /// Recognises a key of unknown type by its shape: UUID (EVP), `@` (EMAIL), `+`
    /// (PHONE), 11 characters (CPF), 14 (CNPJ).
    pub fn detect(value: &str) -> Result<Self, PixKeyError> {
        let value = value.trim();
        let compact: String = value
            .chars()
            .filter(|c| !matches!(c, '.' | '-' | '/' | ' '))
            .collect();
        let kind = if Self::parse(PixKeyType::Evp, value).is_ok() {
            PixKeyType::Evp
        } else if value.contains('@') {
            PixKeyType::Email
        } else if value.starts_with('+') {
            PixKeyType::Phone
        } else if compact.len() == 11 && compact.bytes().all(|b| b.is_ascii_digit()) {
            PixKeyType::Cpf
        } else if compact.len() == 14 {
            PixKeyType::Cnpj
        } else {
            return Err(PixKeyError::Unrecognised);
        };
        Self::parse(kind, value)
    }

    /// A new random key, as the directory generates it (UUID v4).
    pub fn new_evp() -> Self {
        Self {
            value: uuid::Uuid::new_v4().to_string(),
            kind: PixKeyType::Evp,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.value
    }

    pub fn kind(&self) -> PixKeyType {
        self.kind
    }
}

/// The DICT's email key pattern (lowercase ASCII): a local part of letters, digits and
/// ``.!#$&'*+/=?^_`{|}~-`` (no `%`), then a domain of dot-separated labels of letters,
/// digits and inner hyphens, 63 characters at most each. Cofre also wants at least one
/// dot in the domain, as every address a payer can type has.
fn is_dict_email(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    let local_ok = !local.is_empty()
        && local.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || b".!#$&'*+/=?^_`{|}~-".contains(&b)
        });
    let label_ok = |label: &str| {
        (1..=63).contains(&label.len())
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    local_ok && domain.contains('.') && domain.split('.').all(label_ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_each_type() {
        let k = |t, v| PixKey::parse(t, v).map(|k| k.as_str().to_owned());
        assert_eq!(
            k(PixKeyType::Cpf, "111.444.777-35"),
            Ok("11144477735".into())
        );
        assert_eq!(
            k(PixKeyType::Cnpj, "12.abc.345/01de-35"),
            Ok("12ABC34501DE35".into())
        );
        assert_eq!(
            k(PixKeyType::Email, " Ana@Example.COM "),
            Ok("ana@example.com".into())
        );
        assert_eq!(
            k(PixKeyType::Phone, "(11) 98765-4321"),
            Ok("+5511987654321".into())
        );
        assert_eq!(
            k(PixKeyType::Phone, "+5511987654321"),
            Ok("+5511987654321".into())
        );
        assert_eq!(
            k(PixKeyType::Evp, "123E4567-E89B-42D3-A456-426614174000"),
            Ok("123e4567-e89b-42d3-a456-426614174000".into())
        );
    }

    #[test]
    fn refuses_invalid_values() {
        assert!(PixKey::parse(PixKeyType::Cpf, "11.222.333/0001-81").is_err());
        assert!(PixKey::parse(PixKeyType::Cnpj, "111.444.777-35").is_err());
        assert!(PixKey::parse(PixKeyType::Email, "a%b@example.com").is_err());
        assert!(PixKey::parse(PixKeyType::Email, "no-at-sign").is_err());
        assert!(PixKey::parse(PixKeyType::Phone, "+0123").is_err());
        assert!(PixKey::parse(PixKeyType::Phone, "12345").is_err());
        assert!(PixKey::parse(PixKeyType::Evp, "not-a-uuid").is_err());
        let long = format!("{}@example.com", "a".repeat(70));
        assert_eq!(
            PixKey::parse(PixKeyType::Email, &long),
            Err(PixKeyError::TooLong)
        );
    }

    #[test]
    fn emails_follow_the_dict_pattern() {
        // Found by the pix_key fuzz target: `ℬf(:\0@j.:` was a valid email key. Unicode
        // lowercasing could also make a 77-character key 78 long, so that the stored
        // key no longer parsed.
        for bad in [
            "ℬf(:\0@j.:",
            "ana@exemplo.com.br\0",
            "a(b)@example.com",
            "joão@example.com",
            "ana@exémplo.com",
            "\u{130}@example.com",
            "ana@-example.com",
            "ana@example-.com",
            "ana@example..com",
            "ana@@example.com",
            "a b@example.com",
            "ana@localhost",
        ] {
            assert_eq!(
                PixKey::parse(PixKeyType::Email, bad),
                Err(PixKeyError::Invalid(PixKeyType::Email)),
                "{bad:?}"
            );
        }
        for good in [
            "Ana.Maria+pix@Example.COM",
            "o'neil@example.com",
            "x_y-z@sub-1.example.com.br",
            "{a}|~!#$&*/=?^`@9.example",
        ] {
            let key = PixKey::parse(PixKeyType::Email, good).unwrap();
            assert_eq!(key.as_str(), good.to_ascii_lowercase());
        }
        let label = "a".repeat(64);
        assert!(PixKey::parse(PixKeyType::Email, &format!("a@{label}.com")).is_err());
    }

    #[test]
    fn detects_the_type_from_the_shape() {
        let kind = |v| PixKey::detect(v).map(|k| k.kind());
        assert_eq!(
            kind("6d1f3c0e-8a4b-4c2d-9e7f-0a1b2c3d4e5f"),
            Ok(PixKeyType::Evp)
        );
        assert_eq!(kind("Ana@Example.com"), Ok(PixKeyType::Email));
        assert_eq!(kind("+5511987654321"), Ok(PixKeyType::Phone));
        assert_eq!(kind("111.444.777-35"), Ok(PixKeyType::Cpf));
        assert_eq!(kind("12.ABC.345/01DE-35"), Ok(PixKeyType::Cnpj));
        assert_eq!(kind("hello"), Err(PixKeyError::Unrecognised));
    }

    #[test]
    fn random_is_the_withdraw_name_of_evp() {
        assert_eq!(PixKeyType::parse("RANDOM"), Some(PixKeyType::Evp));
        assert!(PixKey::new_evp().as_str().len() == 36);
    }
}
