//! `GET /api/v1/changelog`: the dated change history, from one source file
//! (`server/changelog.json`), newest first. Every later change is added there.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::AppState;
use super::json::ApiJson;

const SOURCE: &str = include_str!("../../changelog.json");

#[derive(Clone, Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangelogEntry {
    /// `YYYY-MM`.
    pub month: String,
    /// `Added`, `Changed`, `Deprecated` or `Removed`.
    #[serde(rename = "type")]
    pub kind: String,
    pub change: String,
}

#[derive(Serialize, ToSchema)]
pub struct ChangelogResponse {
    changelog: Vec<ChangelogEntry>,
}

/// The parsed change log, checked: known types and months newest first.
pub fn entries() -> anyhow::Result<Vec<ChangelogEntry>> {
    let entries: Vec<ChangelogEntry> = serde_json::from_str(SOURCE)?;
    for e in &entries {
        anyhow::ensure!(
            ["Added", "Changed", "Deprecated", "Removed"].contains(&e.kind.as_str()),
            "changelog: unknown type {}",
            e.kind
        );
        anyhow::ensure!(
            e.month.len() == 7 && e.month.as_bytes()[4] == b'-',
            "changelog: month {} is not YYYY-MM",
            e.month
        );
    }
    anyhow::ensure!(
        entries.windows(2).all(|w| w[0].month >= w[1].month),
        "changelog: entries must be newest first"
    );
    Ok(entries)
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(changelog))
}

/// The API's change history (type Added, Changed, Deprecated or Removed), newest first.
#[utoipa::path(
    get, path = "/api/v1/changelog", tag = "meta",
    security(()),
    responses((status = 200, body = ChangelogResponse))
)]
async fn changelog(state: axum::extract::State<AppState>) -> ApiJson<ChangelogResponse> {
    ApiJson(ChangelogResponse {
        changelog: state.changelog.as_ref().clone(),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_source_file_is_valid_and_holds_the_seed_table() {
        let entries = super::entries().unwrap();
        assert_eq!(entries.len(), 10);
        assert_eq!(entries[0].month, "2026-09");
        assert!(
            entries
                .iter()
                .any(|e| e.kind == "Removed" && e.month == "2026-04")
        );
    }
}
