//! pt-BR by default, English on request: the choice lives in the `cofre_lang` cookie,
//! which the server reads while rendering and the browser reads while hydrating, so
//! both render the same text. Texts sit next to their use as `t("pt", "en")` pairs.

use leptos::prelude::*;

pub const COOKIE: &str = "cofre_lang";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    PtBr,
    En,
}

impl Lang {
    pub fn from_cookie_header(header: &str) -> Lang {
        let en = header
            .split(';')
            .filter_map(|c| c.trim().split_once('='))
            .any(|(k, v)| k == COOKIE && v == "en");
        if en { Lang::En } else { Lang::PtBr }
    }

    pub fn tag(self) -> &'static str {
        match self {
            Lang::PtBr => "pt-BR",
            Lang::En => "en",
        }
    }
}

/// The language of this render: the request's cookie on the server, the document's
/// cookie in the browser.
pub fn detect() -> Lang {
    #[cfg(feature = "ssr")]
    {
        use_context::<http::request::Parts>()
            .and_then(|parts| {
                parts
                    .headers
                    .get(http::header::COOKIE)
                    .and_then(|v| v.to_str().ok())
                    .map(Lang::from_cookie_header)
            })
            .unwrap_or(Lang::PtBr)
    }
    #[cfg(all(feature = "hydrate", not(feature = "ssr")))]
    {
        use wasm_bindgen::JsCast;
        document()
            .dyn_into::<web_sys::HtmlDocument>()
            .ok()
            .and_then(|d| d.cookie().ok())
            .map(|c| Lang::from_cookie_header(&c))
            .unwrap_or(Lang::PtBr)
    }
    #[cfg(not(any(feature = "ssr", feature = "hydrate")))]
    {
        Lang::PtBr
    }
}

/// The text in the language provided by [`crate::App`].
pub fn t(pt: &'static str, en: &'static str) -> &'static str {
    match use_context::<Lang>().unwrap_or(Lang::PtBr) {
        Lang::PtBr => pt,
        Lang::En => en,
    }
}

/// The text in the language of the request a server fn is answering.
#[cfg(feature = "ssr")]
pub fn server_text(pt: &'static str, en: &'static str) -> &'static str {
    match detect() {
        Lang::PtBr => pt,
        Lang::En => en,
    }
}

/// Centavos as `R$ 1.234,56` (pt-BR) or `R$ 1,234.56` (en).
pub fn money(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let cents = cents.unsigned_abs();
    let (units, frac) = (cents / 100, cents % 100);
    let digits = units.to_string();
    let (group, decimal) = match use_context::<Lang>().unwrap_or(Lang::PtBr) {
        Lang::PtBr => ('.', ','),
        Lang::En => (',', '.'),
    };
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(group);
        }
        grouped.push(c);
    }
    format!("{sign}R$ {grouped}{decimal}{frac:02}")
}
