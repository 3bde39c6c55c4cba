//! KYC onboardings and their representatives.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{StoreResult, Tx};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OnboardingRow {
    pub id: String,
    pub company_id: String,
    pub correlation_id: String,
    pub tax_id: String,
    pub status: String,
    pub review_note: Option<String>,
    pub reviewed_by: Option<String>,
    pub submissions: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepresentativeRow {
    pub id: String,
    pub onboarding_id: String,
    pub position: i64,
    pub name: String,
    pub tax_id: String,
    pub email: String,
    pub birth_date: String,
    /// JSON array of file ids.
    pub documents: String,
}

const COLUMNS: &str = "id, company_id, correlation_id, tax_id, status, review_note, reviewed_by, \
                       submissions, created_at, updated_at";
const REPRESENTATIVE_COLUMNS: &str =
    "id, onboarding_id, position, name, tax_id, email, birth_date, documents";

fn onboarding(row: &AnyRow) -> StoreResult<OnboardingRow> {
    Ok(OnboardingRow {
        id: row.try_get("id")?,
        company_id: row.try_get("company_id")?,
        correlation_id: row.try_get("correlation_id")?,
        tax_id: row.try_get("tax_id")?,
        status: row.try_get("status")?,
        review_note: row.try_get("review_note")?,
        reviewed_by: row.try_get("reviewed_by")?,
        submissions: row.try_get("submissions")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

fn representative(row: &AnyRow) -> StoreResult<RepresentativeRow> {
    Ok(RepresentativeRow {
        id: row.try_get("id")?,
        onboarding_id: row.try_get("onboarding_id")?,
        position: row.try_get("position")?,
        name: row.try_get("name")?,
        tax_id: row.try_get("tax_id")?,
        email: row.try_get("email")?,
        birth_date: row.try_get("birth_date")?,
        documents: row.try_get("documents")?,
    })
}

/// Inserts an onboarding; `Duplicate` when the company already used the correlationID
/// (a concurrent submission won).
pub async fn insert(tx: &mut Tx, row: &OnboardingRow) -> StoreResult<()> {
    sqlx::query(&format!(
        "INSERT INTO kyc_onboardings ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
    ))
    .bind(&row.id)
    .bind(&row.company_id)
    .bind(&row.correlation_id)
    .bind(&row.tax_id)
    .bind(&row.status)
    .bind(&row.review_note)
    .bind(&row.reviewed_by)
    .bind(row.submissions)
    .bind(row.created_at)
    .bind(row.updated_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub async fn find_by_correlation<'e, E>(
    db: E,
    company_id: &str,
    correlation_id: &str,
) -> StoreResult<Option<OnboardingRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM kyc_onboardings WHERE company_id = $1 AND correlation_id = $2"
    ))
    .bind(company_id)
    .bind(correlation_id)
    .fetch_optional(db)
    .await?;
    row.as_ref().map(onboarding).transpose()
}

pub async fn find<'e, E>(db: E, id: &str) -> StoreResult<Option<OnboardingRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM kyc_onboardings WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(db)
    .await?;
    row.as_ref().map(onboarding).transpose()
}

/// Moves an onboarding from `from` to `to`; false when it was no longer in `from`.
pub async fn set_status(
    tx: &mut Tx,
    id: &str,
    from: &str,
    to: &str,
    review_note: Option<&str>,
    reviewed_by: Option<&str>,
    now: i64,
) -> StoreResult<bool> {
    let done = sqlx::query(
        "UPDATE kyc_onboardings SET status = $3, review_note = $4, reviewed_by = $5, updated_at = $6 \
         WHERE id = $1 AND status = $2",
    )
    .bind(id)
    .bind(from)
    .bind(to)
    .bind(review_note)
    .bind(reviewed_by)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// A resubmission after documents were requested: new tax id, back in review.
pub async fn resubmit(tx: &mut Tx, id: &str, tax_id: &str, now: i64) -> StoreResult<bool> {
    let done = sqlx::query(
        "UPDATE kyc_onboardings SET tax_id = $2, status = 'IN_REVIEW', \
         submissions = submissions + 1, updated_at = $3 \
         WHERE id = $1 AND status = 'DOCUMENTS_REQUESTED'",
    )
    .bind(id)
    .bind(tax_id)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Support's queue: onboardings of every company in `status`, oldest change first.
pub async fn list_all<'e, E>(
    db: E,
    status: Option<&str>,
    limit: i64,
) -> StoreResult<Vec<OnboardingRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM kyc_onboardings WHERE status = COALESCE($1, status) \
         ORDER BY updated_at DESC, id DESC LIMIT $2"
    ))
    .bind(status)
    .bind(limit)
    .fetch_all(db)
    .await?;
    rows.iter().map(onboarding).collect()
}

pub async fn replace_representatives(
    tx: &mut Tx,
    onboarding_id: &str,
    rows: &[RepresentativeRow],
) -> StoreResult<()> {
    sqlx::query("DELETE FROM kyc_representatives WHERE onboarding_id = $1")
        .bind(onboarding_id)
        .execute(&mut **tx)
        .await?;
    for row in rows {
        sqlx::query(&format!(
            "INSERT INTO kyc_representatives ({REPRESENTATIVE_COLUMNS}) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
        ))
        .bind(&row.id)
        .bind(&row.onboarding_id)
        .bind(row.position)
        .bind(&row.name)
        .bind(&row.tax_id)
        .bind(&row.email)
        .bind(&row.birth_date)
        .bind(&row.documents)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

pub async fn representatives<'e, E>(
    db: E,
    onboarding_id: &str,
) -> StoreResult<Vec<RepresentativeRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows = sqlx::query(&format!(
        "SELECT {REPRESENTATIVE_COLUMNS} FROM kyc_representatives WHERE onboarding_id = $1 ORDER BY position"
    ))
    .bind(onboarding_id)
    .fetch_all(db)
    .await?;
    rows.iter().map(representative).collect()
}
