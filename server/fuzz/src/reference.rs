//! Independent readings of the rules the server's parsers implement, kept deliberately
//! different in form (explicit weight tables, `char` arithmetic) so that a shared mistake
//! is unlikely. Used only as oracles by the fuzz targets.

/// The canonical CPF or CNPJ of `input`, or `None`: punctuation `.`, `-`, `/` and spaces
/// dropped, letters capitalised; a CPF is 11 digits, a CNPJ 12 characters `0-9A-Z` and 2
/// check digits (Receita Federal, IN 2229/2024: a character is worth its ASCII code minus
/// 48). Sequences of one repeated digit (CPF) and the all-zero base (CNPJ) are not issued.
pub fn tax_id(input: &str) -> Option<String> {
    let canonical: String = input
        .chars()
        .filter(|c| !matches!(c, '.' | '-' | '/' | ' '))
        .map(|c| c.to_ascii_uppercase())
        .collect();
    let values: Vec<u32> = canonical
        .chars()
        .map(|c| match c {
            '0'..='9' | 'A'..='Z' => Some(c as u32 - '0' as u32),
            _ => None,
        })
        .collect::<Option<_>>()?;
    // A check digit from a weighted sum: 11 - (sum mod 11), where 10 and 11 become 0.
    let check = |digits: &[u32], weights: &[u32]| {
        let sum: u32 = digits.iter().zip(weights).map(|(d, w)| d * w).sum();
        match 11 - sum % 11 {
            10 | 11 => 0,
            d => d,
        }
    };
    match values.len() {
        11 => {
            if values.iter().any(|v| *v > 9) || values.iter().all(|v| *v == values[0]) {
                return None;
            }
            let first = check(&values[..9], &[10, 9, 8, 7, 6, 5, 4, 3, 2]);
            let second = check(&values[..10], &[11, 10, 9, 8, 7, 6, 5, 4, 3, 2]);
            (values[9] == first && values[10] == second).then_some(canonical)
        }
        14 => {
            if values[12] > 9 || values[13] > 9 || values[..12].iter().all(|v| *v == 0) {
                return None;
            }
            let first = check(&values[..12], &[5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
            let second = check(&values[..13], &[6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
            (values[12] == first && values[13] == second).then_some(canonical)
        }
        _ => None,
    }
}

/// FEBRABAN "módulo 10" of a digit string: weights 2, 1, 2, 1... from the right, the
/// digits of each product added, then (10 - sum mod 10) mod 10.
pub fn mod10(digits: &str) -> u8 {
    let mut sum = 0;
    let mut weight = 2;
    for c in digits.chars().rev() {
        let product = c.to_digit(10).unwrap_or(0) * weight;
        sum += product
            .to_string()
            .chars()
            .map(|d| d.to_digit(10).unwrap_or(0))
            .sum::<u32>();
        weight = 3 - weight;
    }
    ((10 - sum % 10) % 10) as u8
}

/// FEBRABAN "módulo 11" of a barcode without its check digit: weights 2..=9 repeating
/// from the right; 11 - sum mod 11, and 0, 10 and 11 become 1.
pub fn mod11(digits: &str) -> u8 {
    let mut sum = 0;
    let mut weight = 2;
    for c in digits.chars().rev() {
        sum += c.to_digit(10).unwrap_or(0) * weight;
        weight = if weight == 9 { 2 } else { weight + 1 };
    }
    let dv = 11 - sum % 11;
    if dv == 0 || dv > 9 { 1 } else { dv as u8 }
}
