//! Disputes (MED): a payer's claim against a received Pix. Opening one blocks its value
//! (available -> blocked); while IN_REVIEW the receiver sends evidence (links, or
//! DISPUTE_EVIDENCE files with the company feature `DISPUTE_EVIDENCE_FILE_ID`, seed
//! rule 4); support then accepts it (the payer wins: the blocked value leaves the
//! account) or rejects it (the receiver wins: the value is released), or the payer
//! cancels it (released). Every change emits its `DISPUTE_*` event in its transaction.

use serde_json::{Value, json};
use tracing::instrument;

use super::applications::Caller;
use super::clock::SharedClock;
use super::events;
use super::features::Feature;
use super::files::{FileError, Files, Purpose};
use super::ledger::{self, Kind, LedgerError, Movement};
use super::refunds::transaction_visible;
use super::{FieldError, Page, PageInfo, Problem, Validation};
use crate::store::{
    self, Backend, Store, StoreError,
    disputes::{DisputeRow, EvidenceRow},
    ledger::TransactionRow,
};

/// The states of a dispute; only IN_REVIEW is open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    InReview,
    Accepted,
    Rejected,
    Canceled,
}

impl Status {
    pub const ALL: [Status; 4] = [
        Status::InReview,
        Status::Accepted,
        Status::Rejected,
        Status::Canceled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::InReview => "IN_REVIEW",
            Status::Accepted => "ACCEPTED",
            Status::Rejected => "REJECTED",
            Status::Canceled => "CANCELED",
        }
    }

    pub fn parse(value: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.as_str() == value.trim())
    }

    /// The event a change into this state emits.
    fn event(self) -> &'static str {
        match self {
            Status::InReview => events::DISPUTE_CREATE,
            Status::Accepted => events::DISPUTE_ACCEPTED,
            Status::Rejected => events::DISPUTE_REJECTED,
            Status::Canceled => events::DISPUTE_CANCELED,
        }
    }
}

/// How a dispute ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// Support decides for the payer: the blocked value leaves the account.
    Accept,
    /// Support decides for the receiver: the blocked value is available again.
    Reject,
    /// The payer withdraws the claim: the blocked value is available again.
    Cancel,
}

impl Resolution {
    fn status(self) -> Status {
        match self {
            Resolution::Accept => Status::Accepted,
            Resolution::Reject => Status::Rejected,
            Resolution::Cancel => Status::Canceled,
        }
    }

    fn movement(self) -> Kind {
        match self {
            Resolution::Accept => Kind::DisputeDebit,
            Resolution::Reject | Resolution::Cancel => Kind::DisputeRelease,
        }
    }
}

/// At most this many documents per request and per dispute.
pub const MAX_DOCUMENTS_PER_REQUEST: usize = 20;
pub const MAX_DOCUMENTS: usize = 50;

#[derive(Debug, thiserror::Error)]
pub enum DisputeError {
    #[error("invalid fields")]
    Validation(Vec<FieldError>),
    #[error("the company lacks DISPUTE_EVIDENCE_FILE_ID")]
    FileIdNotAllowed,
    #[error("a document has both url and fileId")]
    UrlAndFileId,
    #[error("dispute not found")]
    NotFound,
    #[error("transaction not found")]
    TransactionNotFound,
    #[error("only a received Pix can be disputed")]
    NotDisputable,
    #[error("this Pix already has a dispute")]
    AlreadyExists,
    #[error("the dispute is closed ({0})")]
    Closed(&'static str),
    #[error("a dispute takes at most {MAX_DOCUMENTS} documents")]
    TooManyDocuments,
    #[error("the available balance is smaller than the disputed value")]
    InsufficientFunds,
    #[error(transparent)]
    File(FileError),
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for DisputeError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::InsufficientFunds => DisputeError::InsufficientFunds,
            other => DisputeError::Store(other),
        }
    }
}

impl From<LedgerError> for DisputeError {
    fn from(err: LedgerError) -> Self {
        match err {
            LedgerError::InsufficientFunds => DisputeError::InsufficientFunds,
            LedgerError::Store(e) => e.into(),
        }
    }
}

impl From<FileError> for DisputeError {
    fn from(err: FileError) -> Self {
        match err {
            FileError::Store(e) => e.into(),
            other => DisputeError::File(other),
        }
    }
}

/// A dispute with what its views show: the disputed Pix and the evidence.
#[derive(Clone, Debug)]
pub struct Dispute {
    pub row: DisputeRow,
    pub pix: TransactionRow,
    pub evidence: Vec<EvidenceRow>,
}

impl Dispute {
    pub fn status(&self) -> Status {
        Status::parse(&self.row.status).unwrap_or(Status::InReview)
    }

    /// The dispute as event payloads show it.
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.row.id,
            "status": self.row.status,
            "value": self.row.value,
            "reason": self.row.reason,
            "transactionID": self.pix.id,
            "endToEndId": self.pix.end_to_end_id,
            "accountId": self.row.account_id,
            "documents": self.evidence.len(),
            "resolutionNote": self.row.resolution_note,
        })
    }
}

/// One document of an evidence request, as the client sent it.
#[derive(Clone, Debug, Default)]
pub struct DocumentInput {
    pub url: Option<String>,
    pub file_id: Option<String>,
    pub description: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Disputes {
    store: Store,
    clock: SharedClock,
}

impl Disputes {
    pub fn new(store: Store, clock: SharedClock) -> Self {
        Self { store, clock }
    }

    /// Opens a dispute on a received Pix (its id or endToEndId) that `caller` may see:
    /// blocks its value and emits `DISPUTE_CREATE`. The sandbox's central bank and
    /// support open disputes; `opened_by` says which.
    #[instrument(name = "service.disputes.open", skip_all)]
    pub async fn open(
        &self,
        caller: &Caller,
        transaction_id: &str,
        reason: Option<&str>,
        opened_by: &str,
    ) -> Result<(Dispute, TransactionRow), DisputeError> {
        let mut v = Validation::default();
        let reason = reason
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .unwrap_or("MED: fraude");
        if reason.chars().count() > 140 {
            v.add("reason", Problem::TooLong { max: 140 });
        }
        v.finish().map_err(DisputeError::Validation)?;
        let now = self.clock.now_millis();
        let mut tx = self.store.begin().await?;
        let pix = store::ledger::find(&mut *tx, transaction_id.trim())
            .await?
            .filter(|t| transaction_visible(caller, t))
            .ok_or(DisputeError::TransactionNotFound)?;
        if pix.kind != Kind::PixIn.as_str() {
            return Err(DisputeError::NotDisputable);
        }
        if store::disputes::exists_for_transaction(&mut tx, &pix.id).await? {
            return Err(DisputeError::AlreadyExists);
        }
        let block = ledger::record(
            &mut tx,
            now,
            Movement {
                id: None,
                kind: Kind::DisputeBlock,
                company_id: pix.company_id.clone(),
                account_id: pix.account_id.clone(),
                value: pix.value,
                charge_id: pix.charge_id.clone(),
                description: Some("dispute".into()),
                counterparty: serde_json::from_str(&pix.counterparty).unwrap_or_default(),
                original_id: Some(pix.id.clone()),
                correlation_id: None,
            },
        )
        .await?;
        let row = DisputeRow {
            id: store::new_id("dsp"),
            company_id: pix.company_id.clone(),
            account_id: pix.account_id.clone(),
            transaction_id: pix.id.clone(),
            block_id: block.id.clone(),
            resolution_id: None,
            value: pix.value,
            status: Status::InReview.as_str().into(),
            reason: reason.to_owned(),
            opened_by: opened_by.to_owned(),
            resolution_note: None,
            created_at: now,
            updated_at: now,
            closed_at: None,
        };
        store::disputes::insert(&mut tx, &row)
            .await
            .map_err(|e| match e {
                StoreError::Duplicate => DisputeError::AlreadyExists,
                other => other.into(),
            })?;
        let dispute = Dispute {
            row,
            pix,
            evidence: Vec::new(),
        };
        emit(&mut tx, now, &dispute, &block).await?;
        tx.commit().await.map_err(StoreError::from)?;
        tracing::info!(dispute = %dispute.row.id, value = dispute.row.value, "dispute opened");
        Ok((dispute, block))
    }

    async fn load(&self, row: DisputeRow) -> Result<Dispute, DisputeError> {
        let pix = store::ledger::get(self.store.pool(), &row.transaction_id).await?;
        let evidence = store::disputes::evidence_of(self.store.pool(), &row.id).await?;
        Ok(Dispute { row, pix, evidence })
    }

    fn visible(caller: &Caller, row: &DisputeRow) -> bool {
        row.company_id == caller.company_id
            && (caller.is_master() || row.account_id == caller.account_id)
    }

    /// A dispute the caller may see: its company's MASTER, or the application of the
    /// disputed account.
    pub async fn get(&self, caller: &Caller, id: &str) -> Result<Dispute, DisputeError> {
        let row = store::disputes::find(self.store.pool(), id.trim())
            .await?
            .filter(|d| Self::visible(caller, d))
            .ok_or(DisputeError::NotFound)?;
        self.load(row).await
    }

    /// The disputes the caller may see, newest first, optionally of one status.
    pub async fn list(
        &self,
        caller: &Caller,
        status: Option<&str>,
        page: Page,
    ) -> Result<(Vec<Dispute>, PageInfo), DisputeError> {
        let status = match status.map(str::trim).filter(|s| !s.is_empty()) {
            None => None,
            Some(s) => Some(Status::parse(s).ok_or_else(|| {
                DisputeError::Validation(vec![FieldError::new("status", Problem::UnknownValue)])
            })?),
        };
        let account = (!caller.is_master()).then_some(caller.account_id.as_str());
        let (rows, total) = store::disputes::list(
            self.store.pool(),
            &caller.company_id,
            account,
            status.map(Status::as_str),
            page.skip,
            page.limit,
        )
        .await?;
        let mut disputes = Vec::with_capacity(rows.len());
        for row in rows {
            disputes.push(self.load(row).await?);
        }
        Ok((disputes, page.info(total)))
    }

    /// Adds evidence to an open dispute, following seed rules 4 and 7 in this order: a
    /// `fileId` without the company feature is 403; the dispute must be the caller's;
    /// each document has exactly one of `url` and `fileId`; the dispute must be open;
    /// every `fileId` must be a DISPUTE_EVIDENCE file of the company. All of it is
    /// checked before anything is written, so one bad document saves nothing.
    #[instrument(name = "service.disputes.add_evidence", skip_all)]
    pub async fn add_evidence(
        &self,
        caller: &Caller,
        id: &str,
        documents: Option<Vec<DocumentInput>>,
    ) -> Result<Dispute, DisputeError> {
        let documents = documents.unwrap_or_default();
        if documents.iter().any(|d| d.file_id.is_some()) {
            let features =
                store::companies::features(self.store.pool(), &caller.company_id).await?;
            if !features
                .iter()
                .any(|f| f == Feature::DisputeEvidenceFileId.as_str())
            {
                return Err(DisputeError::FileIdNotAllowed);
            }
        }
        let found = store::disputes::find(self.store.pool(), id.trim())
            .await?
            .filter(|d| Self::visible(caller, d))
            .ok_or(DisputeError::NotFound)?;
        if documents
            .iter()
            .any(|d| d.url.is_some() && d.file_id.is_some())
        {
            return Err(DisputeError::UrlAndFileId);
        }
        let checked = check_documents(&documents)?;

        let now = self.clock.now_millis();
        let mut tx = self.store.begin().await?;
        let postgres = self.store.backend() == Backend::Postgres;
        let row = store::disputes::find_for_update(&mut tx, &found.id, postgres)
            .await?
            .ok_or(DisputeError::NotFound)?;
        let status = Status::parse(&row.status).unwrap_or(Status::InReview);
        if status != Status::InReview {
            return Err(DisputeError::Closed(status.as_str()));
        }
        let file_ids: Vec<String> = checked.iter().filter_map(|d| d.file_id.clone()).collect();
        Files::resolve(
            &mut tx,
            &caller.company_id,
            Purpose::DisputeEvidence,
            &file_ids,
        )
        .await?;
        let existing = store::disputes::evidence_of(&mut *tx, &row.id).await?;
        if existing.len() + checked.len() > MAX_DOCUMENTS {
            return Err(DisputeError::TooManyDocuments);
        }
        for (i, doc) in checked.into_iter().enumerate() {
            store::disputes::insert_evidence(
                &mut tx,
                &EvidenceRow {
                    id: store::new_id("evd"),
                    dispute_id: row.id.clone(),
                    position: (existing.len() + i) as i64,
                    url: doc.url,
                    file_id: doc.file_id,
                    description: doc.description,
                    created_at: now,
                },
            )
            .await?;
        }
        store::disputes::touch(&mut tx, &row.id, now).await?;
        tx.commit().await.map_err(StoreError::from)?;
        let row = store::disputes::find(self.store.pool(), &found.id)
            .await?
            .ok_or(DisputeError::NotFound)?;
        self.load(row).await
    }

    /// Ends an IN_REVIEW dispute: the ledger movement of its outcome and the event, in
    /// one transaction. `caller` is whoever may see the dispute (support acts through
    /// the company's MASTER caller; the sandbox's payer through the account's).
    #[instrument(name = "service.disputes.resolve", skip_all)]
    pub async fn resolve(
        &self,
        caller: &Caller,
        id: &str,
        resolution: Resolution,
        note: Option<&str>,
    ) -> Result<Dispute, DisputeError> {
        let note = note.map(str::trim).filter(|n| !n.is_empty());
        if note.is_some_and(|n| n.chars().count() > 500) {
            return Err(DisputeError::Validation(vec![FieldError::new(
                "note",
                Problem::TooLong { max: 500 },
            )]));
        }
        let now = self.clock.now_millis();
        let mut tx = self.store.begin().await?;
        let postgres = self.store.backend() == Backend::Postgres;
        let row = store::disputes::find_for_update(&mut tx, id.trim(), postgres)
            .await?
            .filter(|d| Self::visible(caller, d))
            .ok_or(DisputeError::NotFound)?;
        let status = Status::parse(&row.status).unwrap_or(Status::InReview);
        if status != Status::InReview {
            return Err(DisputeError::Closed(status.as_str()));
        }
        let pix = store::ledger::get(&mut *tx, &row.transaction_id).await?;
        let movement = ledger::record(
            &mut tx,
            now,
            Movement {
                id: None,
                kind: resolution.movement(),
                company_id: row.company_id.clone(),
                account_id: row.account_id.clone(),
                value: row.value,
                charge_id: pix.charge_id.clone(),
                description: Some(format!("dispute {}", resolution.status().as_str())),
                counterparty: serde_json::from_str(&pix.counterparty).unwrap_or_default(),
                original_id: Some(pix.id.clone()),
                correlation_id: None,
            },
        )
        .await?;
        let new_status = resolution.status();
        if !store::disputes::close(
            &mut tx,
            &row.id,
            new_status.as_str(),
            &movement.id,
            note,
            now,
        )
        .await?
        {
            return Err(DisputeError::Closed(status.as_str()));
        }
        let evidence = store::disputes::evidence_of(&mut *tx, &row.id).await?;
        let dispute = Dispute {
            row: DisputeRow {
                status: new_status.as_str().into(),
                resolution_id: Some(movement.id.clone()),
                resolution_note: note.map(str::to_owned),
                updated_at: now,
                closed_at: Some(now),
                ..row
            },
            pix,
            evidence,
        };
        emit(&mut tx, now, &dispute, &movement).await?;
        tx.commit().await.map_err(StoreError::from)?;
        tracing::info!(dispute = %dispute.row.id, status = new_status.as_str(), "dispute closed");
        Ok(dispute)
    }

    /// Support's queue: the newest disputes of every company, optionally of one status.
    pub async fn list_all(
        &self,
        status: Option<Status>,
        limit: i64,
    ) -> Result<Vec<Dispute>, DisputeError> {
        let rows =
            store::disputes::list_all(self.store.pool(), status.map(Status::as_str), limit).await?;
        let mut disputes = Vec::with_capacity(rows.len());
        for row in rows {
            disputes.push(self.load(row).await?);
        }
        Ok(disputes)
    }

    /// A dispute by id for support (any company).
    pub async fn find_any(&self, id: &str) -> Result<Dispute, DisputeError> {
        let row = store::disputes::find(self.store.pool(), id.trim())
            .await?
            .ok_or(DisputeError::NotFound)?;
        self.load(row).await
    }
}

async fn emit(
    tx: &mut store::Tx,
    now: i64,
    dispute: &Dispute,
    movement: &TransactionRow,
) -> Result<(), StoreError> {
    events::emit(
        tx,
        now,
        &dispute.row.company_id,
        None,
        dispute.status().event(),
        json!({
            "dispute": dispute.to_json(),
            "pix": events::transaction_json(&dispute.pix),
            "movement": events::transaction_json(movement),
        }),
    )
    .await?;
    Ok(())
}

/// Validates each document's fields (`url` xor `fileId` is checked before): an http(s)
/// url of at most 2 048 characters, a fileId, a description of at most 500 characters.
fn check_documents(documents: &[DocumentInput]) -> Result<Vec<DocumentInput>, DisputeError> {
    let mut v = Validation::default();
    if documents.is_empty() {
        v.add("documents", Problem::Required);
    } else if documents.len() > MAX_DOCUMENTS_PER_REQUEST {
        v.add("documents", Problem::Invalid);
    }
    let mut checked = Vec::with_capacity(documents.len());
    for (i, doc) in documents.iter().enumerate() {
        let url = doc.url.as_deref().map(str::trim).filter(|u| !u.is_empty());
        let file_id = doc
            .file_id
            .as_deref()
            .map(str::trim)
            .filter(|f| !f.is_empty());
        match (url, file_id) {
            (None, None) => v.add(format!("documents[{i}].url"), Problem::Required),
            (Some(u), _) => {
                let ok = u.len() <= 2048
                    && url::Url::parse(u).is_ok_and(|p| {
                        matches!(p.scheme(), "http" | "https") && p.host().is_some()
                    });
                if !ok {
                    v.add(format!("documents[{i}].url"), Problem::Invalid);
                }
            }
            (None, Some(f)) if f.len() > 100 => {
                v.add(format!("documents[{i}].fileId"), Problem::Invalid)
            }
            (None, Some(_)) => {}
        }
        let description = doc
            .description
            .as_deref()
            .map(str::trim)
            .filter(|d| !d.is_empty());
        if description.is_some_and(|d| d.chars().count() > 500) {
            v.add(
                format!("documents[{i}].description"),
                Problem::TooLong { max: 500 },
            );
        }
        checked.push(DocumentInput {
            url: url.map(str::to_owned),
            file_id: file_id.map(str::to_owned),
            description: description.map(str::to_owned),
        });
    }
    v.finish().map_err(DisputeError::Validation)?;
    Ok(checked)
}
