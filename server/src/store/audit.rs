//! The audit trail: who changed what in the console. Rows are only ever inserted.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{StoreResult, Tx};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditRow {
    pub id: String,
    pub actor_id: String,
    pub actor_email: String,
    pub company_id: Option<String>,
    pub action: String,
    pub target: String,
    pub detail: String,
    pub at: i64,
}

const COLUMNS: &str = "id, actor_id, actor_email, company_id, action, target, detail, at";

fn audit(row: &AnyRow) -> StoreResult<AuditRow> {
    Ok(AuditRow {
        id: row.try_get("id")?,
        actor_id: row.try_get("actor_id")?,
        actor_email: row.try_get("actor_email")?,
        company_id: row.try_get("company_id")?,
        action: row.try_get("action")?,
        target: row.try_get("target")?,
        detail: row.try_get("detail")?,
        at: row.try_get("at")?,
    })
}

pub async fn insert(tx: &mut Tx, row: &AuditRow) -> StoreResult<()> {
    sqlx::query(&format!(
        "INSERT INTO audit_log ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
    ))
    .bind(&row.id)
    .bind(&row.actor_id)
    .bind(&row.actor_email)
    .bind(&row.company_id)
    .bind(&row.action)
    .bind(&row.target)
    .bind(&row.detail)
    .bind(row.at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The newest entries, of one company or (`None`) of every company.
pub async fn list<'e, E>(db: E, company_id: Option<&str>, limit: i64) -> StoreResult<Vec<AuditRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows = match company_id {
        Some(id) => {
            sqlx::query(&format!(
                "SELECT {COLUMNS} FROM audit_log WHERE company_id = $1 \
                 ORDER BY at DESC, id DESC LIMIT $2"
            ))
            .bind(id)
            .bind(limit)
            .fetch_all(db)
            .await?
        }
        None => {
            sqlx::query(&format!(
                "SELECT {COLUMNS} FROM audit_log ORDER BY at DESC, id DESC LIMIT $1"
            ))
            .bind(limit)
            .fetch_all(db)
            .await?
        }
    };
    rows.iter().map(audit).collect()
}
