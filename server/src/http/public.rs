//! Public pages and images that a payer opens without any credential: the QR image of a
//! charge or static QR code (`qrCodeImage`) and the payment page (`paymentLinkUrl`).
//! Both are addressed by unguessable ids (the charge's 32-character transactionID).

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;

use super::AppState;
use super::rfc3339;
use crate::service::br_code::qr_png;
use crate::service::charges::Status;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/qr/{file}", get(charge_qr))
        .route("/qr/static/{file}", get(static_qr))
        .route("/pay/{transaction_id}", get(pay_page))
}

fn png(payload: &str) -> Response {
    match qr_png(payload) {
        Ok(bytes) => (
            [
                (header::CONTENT_TYPE, "image/png"),
                (header::CACHE_CONTROL, "public, max-age=3600"),
            ],
            bytes,
        )
            .into_response(),
        Err(err) => {
            tracing::error!(%err, "QR rendering failed");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

async fn charge_qr(State(state): State<AppState>, Path(file): Path<String>) -> Response {
    let Some(id) = file.strip_suffix(".png") else {
        return StatusCode::NOT_FOUND.into_response();
    };
    match state.services.charges.public(id).await {
        Ok(charge) => png(&charge.br_code),
        Err(_) => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn static_qr(State(state): State<AppState>, Path(file): Path<String>) -> Response {
    let Some(id) = file.strip_suffix(".png") else {
        return StatusCode::NOT_FOUND.into_response();
    };
    match state.services.qr_codes.public(id).await {
        Ok(code) => png(&code.br_code),
        Err(_) => StatusCode::NOT_FOUND.into_response(),
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn reais(centavos: i64) -> String {
    let whole = (centavos / 100).to_string();
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push('.');
        }
        grouped.push(c);
    }
    format!("R$ {grouped},{:02}", centavos % 100)
}

async fn pay_page(State(state): State<AppState>, Path(transaction_id): Path<String>) -> Response {
    let Ok(charge) = state.services.charges.public(&transaction_id).await else {
        return (
            StatusCode::NOT_FOUND,
            Html("<!doctype html><title>Cofre</title><p>Cobrança não encontrada.</p>".to_owned()),
        )
            .into_response();
    };
    let status = match Status::parse(&charge.status) {
        Some(Status::Active) => format!("Pague até {}", escape(&rfc3339(charge.expires_at))),
        Some(Status::Completed) => "Cobrança paga.".to_owned(),
        _ => "Cobrança expirada.".to_owned(),
    };
    let comment = charge.comment.as_deref().map(escape).unwrap_or_default();
    let page = format!(
        r#"<!doctype html>
<html lang="pt-BR"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pagar {value} com Pix</title>
<style>body{{font-family:system-ui,sans-serif;max-width:420px;margin:2rem auto;padding:0 1rem;color:#13212e}}
img{{width:100%;max-width:300px;display:block;margin:1rem auto}}textarea{{width:100%;height:7rem;font-family:monospace}}</style></head>
<body><h1>{value}</h1><p>{comment}</p><p><strong>{status}</strong></p>
<img src="/qr/{txid}.png" alt="QR code Pix da cobrança">
<label for="brcode">Pix copia e cola</label><textarea id="brcode" readonly>{br_code}</textarea>
</body></html>"#,
        value = reais(charge.value),
        txid = escape(&charge.transaction_id),
        br_code = escape(&charge.br_code),
    );
    Html(page).into_response()
}

#[cfg(test)]
mod tests {
    #[test]
    fn values_are_written_in_reais() {
        assert_eq!(super::reais(5), "R$ 0,05");
        assert_eq!(super::reais(123_456_789), "R$ 1.234.567,89");
        assert_eq!(
            super::escape("<b>\"x\"</b>"),
            "&lt;b&gt;&quot;x&quot;&lt;/b&gt;"
        );
    }
}
