//! KYC onboarding: a company's MASTER application submits who is behind a tax id (its
//! representatives, each with KYC_DOCUMENT files), addressed afterwards by the
//! submission's correlationID; support reviews it.
//!
//! States: IN_REVIEW -> APPROVED | REJECTED | DOCUMENTS_REQUESTED; a submission with the
//! same correlationID while DOCUMENTS_REQUESTED sends it back to IN_REVIEW with the new
//! representatives. Submitting while IN_REVIEW answers 200 and changes nothing,
//! whatever the body (seed "Limits" 3). Each change emits its `KYC_ONBOARDING_*` event
//! for the MASTER application's webhooks, in the same transaction.

use serde_json::json;
use tracing::instrument;

use super::applications::Caller;
use super::clock::SharedClock;
use super::events;
use super::files::{FileError, Files, Purpose};
use super::tax_id::TaxId;
use super::users::parse_email;
use super::{CorrelationId, FieldError, Problem, Validation};
use crate::store::{
    self, Store, StoreError,
    files::FileRow,
    kyc::{OnboardingRow, RepresentativeRow},
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    InReview,
    Approved,
    Rejected,
    DocumentsRequested,
}

impl Status {
    pub const ALL: [Status; 4] = [
        Status::InReview,
        Status::Approved,
        Status::Rejected,
        Status::DocumentsRequested,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::InReview => "IN_REVIEW",
            Status::Approved => "APPROVED",
            Status::Rejected => "REJECTED",
            Status::DocumentsRequested => "DOCUMENTS_REQUESTED",
        }
    }

    pub fn parse(value: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.as_str() == value.trim())
    }

    fn event(self) -> &'static str {
        match self {
            Status::InReview => events::KYC_ONBOARDING_IN_REVIEW,
            Status::Approved => events::KYC_ONBOARDING_APPROVED,
            Status::Rejected => events::KYC_ONBOARDING_REJECTED,
            Status::DocumentsRequested => events::KYC_ONBOARDING_DOCUMENTS_REQUESTED,
        }
    }
}

/// Support's decision on an onboarding in review.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Approve,
    Reject,
    RequestDocuments,
}

impl Decision {
    fn status(self) -> Status {
        match self {
            Decision::Approve => Status::Approved,
            Decision::Reject => Status::Rejected,
            Decision::RequestDocuments => Status::DocumentsRequested,
        }
    }
}

pub const MAX_REPRESENTATIVES: usize = 10;
pub const MAX_DOCUMENTS: usize = 10;

#[derive(Debug, thiserror::Error)]
pub enum KycError {
    #[error("invalid fields")]
    Validation(Vec<FieldError>),
    #[error("onboarding not found")]
    NotFound,
    #[error("the onboarding is {0}, not in review")]
    NotInReview(&'static str),
    #[error(transparent)]
    File(FileError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<FileError> for KycError {
    fn from(err: FileError) -> Self {
        match err {
            FileError::Store(e) => KycError::Store(e),
            other => KycError::File(other),
        }
    }
}

/// One representative as the client sent it.
#[derive(Clone, Debug, Default)]
pub struct RepresentativeInput {
    pub name: Option<String>,
    pub tax_id: Option<String>,
    pub email: Option<String>,
    pub birth_date: Option<String>,
    pub documents: Option<Vec<String>>,
}

/// An onboarding submission as the client sent it.
#[derive(Clone, Debug, Default)]
pub struct OnboardingInput {
    pub tax_id: Option<String>,
    pub correlation_id: Option<String>,
    pub representatives: Option<Vec<RepresentativeInput>>,
}

/// A representative with its documents resolved.
#[derive(Clone, Debug)]
pub struct Representative {
    pub row: RepresentativeRow,
    pub documents: Vec<FileRow>,
}

#[derive(Clone, Debug)]
pub struct Onboarding {
    pub row: OnboardingRow,
    pub representatives: Vec<Representative>,
}

impl Onboarding {
    pub fn status(&self) -> Status {
        Status::parse(&self.row.status).unwrap_or(Status::InReview)
    }

    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "id": self.row.id,
            "correlationID": self.row.correlation_id,
            "taxID": self.row.tax_id,
            "status": self.row.status,
            "reviewNote": self.row.review_note,
            "representatives": self.representatives.len(),
        })
    }
}

/// A submission that passed every check, ready to save.
struct Checked {
    tax_id: String,
    representatives: Vec<(RepresentativeInputChecked, Vec<String>)>,
}

struct RepresentativeInputChecked {
    name: String,
    tax_id: String,
    email: String,
    birth_date: String,
}

#[derive(Clone, Debug)]
pub struct Kyc {
    store: Store,
    clock: SharedClock,
}

impl Kyc {
    pub fn new(store: Store, clock: SharedClock) -> Self {
        Self { store, clock }
    }

    /// Submits an onboarding. Answers it and whether it was created (201) or already
    /// there (200): in review (unchanged, whatever the body), resubmitted after a
    /// documents request, or closed (the decision stands, the body is not read). Every file id is resolved
    /// before anything is written (seed rule 7).
    #[instrument(name = "service.kyc.submit", skip_all)]
    pub async fn submit(
        &self,
        caller: &Caller,
        input: OnboardingInput,
    ) -> Result<(Onboarding, bool), KycError> {
        let mut v = Validation::default();
        let correlation_id = v.correlation_id(input.correlation_id.as_deref());
        let Some(correlation_id) = correlation_id else {
            return Err(KycError::Validation(v.finish().err().unwrap_or_default()));
        };
        if let Some(existing) = store::kyc::find_by_correlation(
            self.store.pool(),
            &caller.company_id,
            correlation_id.as_str(),
        )
        .await?
        {
            let status = Status::parse(&existing.status).unwrap_or(Status::InReview);
            if status != Status::DocumentsRequested {
                // In review: changes nothing. Closed: the decision stands.
                return Ok((self.load(existing).await?, false));
            }
        }
        let checked = check(input)?;
        let now = self.clock.now_millis();
        let mut tx = self.store.begin().await?;
        let all_files: Vec<String> = checked
            .representatives
            .iter()
            .flat_map(|(_, docs)| docs.iter().cloned())
            .collect();
        Files::resolve(
            &mut tx,
            &caller.company_id,
            Purpose::KycDocument,
            &all_files,
        )
        .await?;
        let existing =
            store::kyc::find_by_correlation(&mut *tx, &caller.company_id, correlation_id.as_str())
                .await?;
        let (id, created) = match existing {
            None => {
                let row = OnboardingRow {
                    id: store::new_id("kyc"),
                    company_id: caller.company_id.clone(),
                    correlation_id: correlation_id.as_str().to_owned(),
                    tax_id: checked.tax_id.clone(),
                    status: Status::InReview.as_str().into(),
                    review_note: None,
                    reviewed_by: None,
                    submissions: 1,
                    created_at: now,
                    updated_at: now,
                };
                match store::kyc::insert(&mut tx, &row).await {
                    Ok(()) => (row.id, true),
                    Err(StoreError::Duplicate) => {
                        // A concurrent submission of the same correlationID won.
                        drop(tx);
                        return self
                            .by_correlation(caller, correlation_id.as_str())
                            .await
                            .map(|o| (o, false));
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            Some(row) => {
                if !store::kyc::resubmit(&mut tx, &row.id, &checked.tax_id, now).await? {
                    // Reviewed or resubmitted meanwhile: answer what is there.
                    drop(tx);
                    return Ok((self.load(row).await?, false));
                }
                (row.id, false)
            }
        };
        let rows: Vec<RepresentativeRow> = checked
            .representatives
            .into_iter()
            .enumerate()
            .map(|(i, (r, docs))| RepresentativeRow {
                id: store::new_id("rep"),
                onboarding_id: id.clone(),
                position: i as i64,
                name: r.name,
                tax_id: r.tax_id,
                email: r.email,
                birth_date: r.birth_date,
                documents: serde_json::to_string(&docs).unwrap_or_else(|_| "[]".into()),
            })
            .collect();
        store::kyc::replace_representatives(&mut tx, &id, &rows).await?;
        let row = store::kyc::find(&mut *tx, &id)
            .await?
            .ok_or(KycError::NotFound)?;
        let onboarding = load_in(&mut tx, row).await?;
        emit(&mut tx, now, caller.application_id.as_str(), &onboarding).await?;
        tx.commit().await.map_err(StoreError::from)?;
        tracing::info!(onboarding = %onboarding.row.id, created, "KYC onboarding in review");
        Ok((onboarding, created))
    }

    async fn load(&self, row: OnboardingRow) -> Result<Onboarding, KycError> {
        let mut conn = self
            .store
            .pool()
            .acquire()
            .await
            .map_err(StoreError::from)?;
        load_in(&mut conn, row).await
    }

    /// The caller's company's onboarding with this correlationID.
    pub async fn by_correlation(
        &self,
        caller: &Caller,
        correlation_id: &str,
    ) -> Result<Onboarding, KycError> {
        let correlation_id = CorrelationId::parse("correlationID", correlation_id)
            .map_err(|e| KycError::Validation(vec![e]))?;
        let row = store::kyc::find_by_correlation(
            self.store.pool(),
            &caller.company_id,
            correlation_id.as_str(),
        )
        .await?
        .ok_or(KycError::NotFound)?;
        self.load(row).await
    }

    /// Support's queue: onboardings of every company, optionally of one status.
    pub async fn list_all(
        &self,
        status: Option<Status>,
        limit: i64,
    ) -> Result<Vec<Onboarding>, KycError> {
        let rows =
            store::kyc::list_all(self.store.pool(), status.map(Status::as_str), limit).await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            out.push(self.load(row).await?);
        }
        Ok(out)
    }

    /// Support's decision on an onboarding in review (by id); a note is required when
    /// rejecting or asking for documents, so the company knows what to do.
    #[instrument(name = "service.kyc.review", skip_all)]
    pub async fn review(
        &self,
        id: &str,
        decision: Decision,
        note: Option<&str>,
        reviewer: &str,
    ) -> Result<Onboarding, KycError> {
        let note = note.map(str::trim).filter(|n| !n.is_empty());
        let mut v = Validation::default();
        match note {
            None if decision != Decision::Approve => v.add("note", Problem::Required),
            Some(n) if n.chars().count() > 500 => v.add("note", Problem::TooLong { max: 500 }),
            _ => {}
        }
        v.finish().map_err(KycError::Validation)?;
        let now = self.clock.now_millis();
        let mut tx = self.store.begin().await?;
        let row = store::kyc::find(&mut *tx, id.trim())
            .await?
            .ok_or(KycError::NotFound)?;
        let status = Status::parse(&row.status).unwrap_or(Status::InReview);
        let to = decision.status();
        if status != Status::InReview
            || !store::kyc::set_status(
                &mut tx,
                &row.id,
                Status::InReview.as_str(),
                to.as_str(),
                note,
                Some(reviewer),
                now,
            )
            .await?
        {
            return Err(KycError::NotInReview(status.as_str()));
        }
        let row = store::kyc::find(&mut *tx, &row.id)
            .await?
            .ok_or(KycError::NotFound)?;
        let onboarding = load_in(&mut tx, row).await?;
        let master = store::applications::list_for_company(&mut *tx, &onboarding.row.company_id)
            .await?
            .into_iter()
            .find(|a| a.kind == "MASTER")
            .map(|a| a.id);
        emit(
            &mut tx,
            now,
            master.as_deref().unwrap_or_default(),
            &onboarding,
        )
        .await?;
        tx.commit().await.map_err(StoreError::from)?;
        tracing::info!(onboarding = %onboarding.row.id, status = to.as_str(), "KYC onboarding reviewed");
        Ok(onboarding)
    }
}

async fn emit(
    tx: &mut store::Tx,
    now: i64,
    application_id: &str,
    onboarding: &Onboarding,
) -> Result<(), StoreError> {
    events::emit(
        tx,
        now,
        &onboarding.row.company_id,
        Some(application_id).filter(|a| !a.is_empty()),
        onboarding.status().event(),
        json!({ "onboarding": onboarding.to_json() }),
    )
    .await?;
    Ok(())
}

/// Every field of a submission: the tax id, 1 to 10 representatives, each with a
/// name, a valid CPF, an email, a past birth date (`YYYY-MM-DD`) and 1 to 10 file ids.
fn check(input: OnboardingInput) -> Result<Checked, KycError> {
    let mut v = Validation::default();
    let tax_id = match input
        .tax_id
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        None => {
            v.add("taxID", Problem::Required);
            String::new()
        }
        Some(t) => TaxId::parse(t)
            .map(|t| t.as_str().to_owned())
            .unwrap_or_else(|_| {
                v.add("taxID", Problem::Invalid);
                String::new()
            }),
    };
    let reps = input.representatives.unwrap_or_default();
    if reps.is_empty() {
        v.add("representatives", Problem::Required);
    } else if reps.len() > MAX_REPRESENTATIVES {
        v.add("representatives", Problem::Invalid);
    }
    let today = time::OffsetDateTime::now_utc().date();
    let mut representatives = Vec::with_capacity(reps.len());
    for (i, rep) in reps.into_iter().enumerate() {
        let p = format!("representatives[{i}].");
        let name = v.text(&format!("{p}name"), rep.name.as_deref(), 200);
        let tax_id = match rep
            .tax_id
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            None => {
                v.add(format!("{p}taxID"), Problem::Required);
                String::new()
            }
            Some(t) => match TaxId::parse(t) {
                Ok(TaxId::Cpf(cpf)) => cpf,
                _ => {
                    v.add(format!("{p}taxID"), Problem::Invalid);
                    String::new()
                }
            },
        };
        let email = parse_email(
            &mut v,
            &format!("{p}email"),
            rep.email.as_deref().unwrap_or_default(),
        );
        let birth_date = rep.birth_date.as_deref().map(str::trim).unwrap_or_default();
        let format = time::macros::format_description!("[year]-[month]-[day]");
        match time::Date::parse(birth_date, &format) {
            _ if birth_date.is_empty() => v.add(format!("{p}birthDate"), Problem::Required),
            Ok(d) if d < today && d.year() >= 1900 => {}
            _ => v.add(format!("{p}birthDate"), Problem::Invalid),
        }
        let documents: Vec<String> = rep
            .documents
            .unwrap_or_default()
            .into_iter()
            .map(|d| d.trim().to_owned())
            .collect();
        if documents.is_empty() {
            v.add(format!("{p}documents"), Problem::Required);
        } else if documents.len() > MAX_DOCUMENTS
            || documents.iter().any(|d| d.is_empty() || d.len() > 100)
        {
            v.add(format!("{p}documents"), Problem::Invalid);
        }
        representatives.push((
            RepresentativeInputChecked {
                name,
                tax_id,
                email,
                birth_date: birth_date.to_owned(),
            },
            documents,
        ));
    }
    v.finish().map_err(KycError::Validation)?;
    Ok(Checked {
        tax_id,
        representatives,
    })
}

/// An onboarding with its representatives and their files, read on `conn` (a pooled
/// connection, or `&mut *tx` to see the transaction's own writes).
async fn load_in(
    conn: &mut sqlx::AnyConnection,
    row: OnboardingRow,
) -> Result<Onboarding, KycError> {
    let reps = store::kyc::representatives(&mut *conn, &row.id).await?;
    let mut representatives = Vec::with_capacity(reps.len());
    for rep in reps {
        let ids: Vec<String> =
            serde_json::from_str(&rep.documents).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let found = store::files::find_many(&mut *conn, &ids).await?;
        // In the order they were sent.
        let documents = ids
            .iter()
            .filter_map(|id| found.iter().find(|f| &f.id == id).cloned())
            .collect();
        representatives.push(Representative {
            row: rep,
            documents,
        });
    }
    Ok(Onboarding {
        row,
        representatives,
    })
}
