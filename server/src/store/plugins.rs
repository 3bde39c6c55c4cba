//! Plugins (components and their bindings) and the invocation log.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{StoreError, StoreResult, Tx};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginRow {
    pub id: String,
    pub company_id: String,
    pub name: String,
    pub version: String,
    pub interface: String,
    pub sha256: String,
    /// JSON array of bindings.
    pub bindings: String,
    pub created_at: i64,
}

const COLUMNS: &str = "id, company_id, name, version, interface, sha256, bindings, created_at";

fn plugin(row: &AnyRow) -> StoreResult<PluginRow> {
    Ok(PluginRow {
        id: row.try_get("id")?,
        company_id: row.try_get("company_id")?,
        name: row.try_get("name")?,
        version: row.try_get("version")?,
        interface: row.try_get("interface")?,
        sha256: row.try_get("sha256")?,
        bindings: row.try_get("bindings")?,
        created_at: row.try_get("created_at")?,
    })
}

pub async fn insert(tx: &mut Tx, p: &PluginRow, component: &[u8]) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO plugins (id, company_id, name, version, interface, component, sha256, bindings, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(&p.id)
    .bind(&p.company_id)
    .bind(&p.name)
    .bind(&p.version)
    .bind(&p.interface)
    .bind(component.to_vec())
    .bind(&p.sha256)
    .bind(&p.bindings)
    .bind(p.created_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The company's live plugins, oldest first.
pub async fn list<'e, E>(db: E, company_id: &str) -> StoreResult<Vec<PluginRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM plugins WHERE company_id = $1 AND deleted_at IS NULL ORDER BY created_at, id"
    ))
    .bind(company_id)
    .fetch_all(db)
    .await?;
    rows.iter().map(plugin).collect()
}

pub async fn get<'e, E>(db: E, id: &str) -> StoreResult<PluginRow>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM plugins WHERE id = $1 AND deleted_at IS NULL"
    ))
    .bind(id)
    .fetch_one(db)
    .await?;
    plugin(&row)
}

pub async fn component<'e, E>(db: E, id: &str) -> StoreResult<Vec<u8>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    Ok(sqlx::query("SELECT component FROM plugins WHERE id = $1")
        .bind(id)
        .fetch_one(db)
        .await?
        .try_get("component")?)
}

pub async fn set_bindings(tx: &mut Tx, id: &str, bindings: &str) -> StoreResult<()> {
    let done = sqlx::query("UPDATE plugins SET bindings = $1 WHERE id = $2 AND deleted_at IS NULL")
        .bind(bindings)
        .bind(id)
        .execute(&mut **tx)
        .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub async fn delete(tx: &mut Tx, id: &str, at: i64) -> StoreResult<()> {
    let done =
        sqlx::query("UPDATE plugins SET deleted_at = $1 WHERE id = $2 AND deleted_at IS NULL")
            .bind(at)
            .bind(id)
            .execute(&mut **tx)
            .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvocationRow {
    pub id: String,
    pub plugin_id: String,
    pub company_id: String,
    pub hook: String,
    pub decision: String,
    pub code: Option<String>,
    pub duration_us: i64,
    pub error: Option<String>,
    pub at: i64,
}

pub async fn insert_invocation<'e, E>(db: E, i: &InvocationRow) -> StoreResult<()>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    sqlx::query(
        "INSERT INTO plugin_invocations (id, plugin_id, company_id, hook, decision, code, duration_us, error, at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(&i.id)
    .bind(&i.plugin_id)
    .bind(&i.company_id)
    .bind(&i.hook)
    .bind(&i.decision)
    .bind(&i.code)
    .bind(i.duration_us)
    .bind(&i.error)
    .bind(i.at)
    .execute(db)
    .await?;
    Ok(())
}

pub async fn invocations<'e, E>(
    db: E,
    plugin_id: &str,
    skip: i64,
    limit: i64,
) -> StoreResult<(Vec<InvocationRow>, i64)>
where
    E: sqlx::Executor<'e, Database = sqlx::Any> + Copy,
{
    let rows = sqlx::query(
        "SELECT id, plugin_id, company_id, hook, decision, code, duration_us, error, at FROM plugin_invocations \
         WHERE plugin_id = $1 ORDER BY at DESC, id DESC LIMIT $2 OFFSET $3",
    )
    .bind(plugin_id)
    .bind(limit)
    .bind(skip)
    .fetch_all(db)
    .await?;
    let total: i64 =
        sqlx::query("SELECT COUNT(*) AS n FROM plugin_invocations WHERE plugin_id = $1")
            .bind(plugin_id)
            .fetch_one(db)
            .await?
            .try_get("n")?;
    let rows = rows
        .iter()
        .map(|r| {
            Ok(InvocationRow {
                id: r.try_get("id")?,
                plugin_id: r.try_get("plugin_id")?,
                company_id: r.try_get("company_id")?,
                hook: r.try_get("hook")?,
                decision: r.try_get("decision")?,
                code: r.try_get("code")?,
                duration_us: r.try_get("duration_us")?,
                error: r.try_get("error")?,
                at: r.try_get("at")?,
            })
        })
        .collect::<StoreResult<_>>()?;
    Ok((rows, total))
}
