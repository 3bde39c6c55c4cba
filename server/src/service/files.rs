//! Files: documents a company uploads once and then names by `fileId` (dispute
//! evidence, KYC documents, ...). The bytes stream into the object store (a local
//! folder by default, any S3-compatible bucket by configuration) and are never held
//! whole in memory; the kind is read from the bytes themselves, never from the
//! declared content type. A `fileId` resolves only for its company and purpose (seed
//! rule 7). Downloads go through links signed with HMAC-SHA256 that expire.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use hmac::{Hmac, Mac};
use object_store::ObjectStore;
use object_store::path::Path as ObjectPath;
use object_store::{WriteMultipart, local::LocalFileSystem};
use sha2::{Digest, Sha256};
use tokio::sync::OnceCell;
use tracing::instrument;

use super::applications::Caller;
use super::clock::SharedClock;
use super::signing::hex;
use super::{CorrelationId, FieldError, Problem, Validation, idempotency};
use crate::store::{self, Store, StoreError, files::FileRow, idempotency::Claim};

mod form;
use form::{HEAD, TAIL, stored_name};
pub use form::{Kind, Purpose, PurposeError, sniff};

#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("invalid fields")]
    Validation(Vec<FieldError>),
    #[error("the file is larger than {max} bytes")]
    TooLarge { max: u64 },
    #[error("the content is not a whole PDF, PNG or JPEG")]
    Unreadable,
    #[error("the request body could not be read")]
    BodyUnreadable,
    #[error("file not found")]
    NotFound,
    #[error("the file was uploaded for another purpose ({0})")]
    PurposeMismatch(String),
    #[error("the download link expired")]
    UrlExpired,
    #[error("the download link is not valid")]
    UrlInvalid,
    #[error("the correlationID was used with another file")]
    CorrelationIdConflict,
    #[error("object store: {0}")]
    ObjectStore(#[from] object_store::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A failure of the request body while it streams in.
#[derive(Debug)]
pub enum BodyError {
    /// The transport's own hard limit cut the body.
    TooLarge,
    /// The body is not valid multipart, or the connection broke.
    Broken,
}

/// Where file bytes live and how their links behave; from the `files` settings.
#[derive(Clone)]
pub struct FileOptions {
    pub objects: Arc<dyn ObjectStore>,
    pub max_bytes: u64,
    pub url_ttl: Duration,
    /// The HMAC key of download links; `None`: a key generated once and kept in the
    /// database, so that every process signs and checks alike.
    pub url_secret: Option<String>,
    /// Bytes buffered before each part goes to the store: what an upload holds in
    /// memory. S3 needs at least 5 MiB; a local folder takes any size.
    pub part_size: usize,
}

impl std::fmt::Debug for FileOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileOptions")
            .field("objects", &self.objects.to_string())
            .field("max_bytes", &self.max_bytes)
            .field("url_ttl", &self.url_ttl)
            .finish_non_exhaustive()
    }
}

impl FileOptions {
    pub const DEFAULT_MAX_BYTES: u64 = 10 * 1024 * 1024;

    /// Files kept in memory: for services built without settings (unit tests, CLI).
    pub fn in_memory() -> Self {
        Self {
            objects: Arc::new(object_store::memory::InMemory::new()),
            max_bytes: Self::DEFAULT_MAX_BYTES,
            url_ttl: Duration::from_secs(15 * 60),
            url_secret: None,
            part_size: 256 * 1024,
        }
    }

    /// Files under `dir` on the local disk (created if missing).
    pub fn local(dir: &std::path::Path) -> anyhow::Result<Self> {
        std::fs::create_dir_all(dir)?;
        Ok(Self {
            objects: Arc::new(LocalFileSystem::new_with_prefix(dir)?),
            max_bytes: Self::DEFAULT_MAX_BYTES,
            url_ttl: Duration::from_secs(15 * 60),
            url_secret: None,
            part_size: 256 * 1024,
        })
    }
}

/// A file stored by [`Files::receive`] and not yet recorded.
#[derive(Debug)]
pub struct Received {
    id: String,
    location: ObjectPath,
    name: String,
    size: u64,
    sha256: String,
    kind: Option<Kind>,
}

/// A recorded file and whether this request created it.
#[derive(Clone, Debug)]
pub struct Uploaded {
    pub file: FileRow,
    pub created: bool,
}

/// A file's bytes, streaming out of the object store.
pub struct Download {
    pub file: FileRow,
    pub body: futures_util::stream::BoxStream<'static, Result<Bytes, object_store::Error>>,
}

#[derive(Clone, Debug)]
pub struct Files {
    store: Store,
    clock: SharedClock,
    options: FileOptions,
    key: Arc<OnceCell<Vec<u8>>>,
}

impl Files {
    pub fn new(store: Store, clock: SharedClock, options: FileOptions) -> Self {
        Self {
            store,
            clock,
            options,
            key: Arc::new(OnceCell::new()),
        }
    }

    fn location(company_id: &str, file_id: &str) -> ObjectPath {
        ObjectPath::from(format!("{company_id}/{file_id}"))
    }

    /// Streams one uploaded file into the object store, hashing it and keeping only its
    /// first and last bytes for [`sniff`]. Past the size limit nothing more is stored:
    /// the rest of the body is read and dropped (so the client gets its 413 instead of
    /// a reset connection), the partial object is removed, and the answer is `TooLarge`.
    #[instrument(name = "service.files.receive", skip_all)]
    pub async fn receive<S>(
        &self,
        caller: &Caller,
        name: Option<&str>,
        mut body: S,
    ) -> Result<Received, FileError>
    where
        S: Stream<Item = Result<Bytes, BodyError>> + Unpin,
    {
        let id = store::new_id("file");
        let location = Self::location(&caller.company_id, &id);
        let upload = self.options.objects.put_multipart(&location).await?;
        let mut writer = WriteMultipart::new_with_chunk_size(upload, self.options.part_size);
        let mut hasher = Sha256::new();
        let mut head = Vec::with_capacity(HEAD);
        let mut tail: Vec<u8> = Vec::with_capacity(2 * TAIL);
        let mut size: u64 = 0;
        let max = self.options.max_bytes;
        let outcome = loop {
            let chunk = match body.next().await {
                None => break Ok(()),
                Some(Ok(chunk)) => chunk,
                Some(Err(BodyError::TooLarge)) => break Err(FileError::TooLarge { max }),
                Some(Err(BodyError::Broken)) => break Err(FileError::BodyUnreadable),
            };
            size += chunk.len() as u64;
            if size > max {
                // Read the rest and drop it, up to twice the limit: past that the
                // connection is cut instead.
                while size <= max.saturating_mul(2)
                    && let Some(Ok(rest)) = body.next().await
                {
                    size += rest.len() as u64;
                }
                break Err(FileError::TooLarge { max });
            }
            hasher.update(&chunk);
            if head.len() < HEAD {
                let take = (HEAD - head.len()).min(chunk.len());
                head.extend_from_slice(&chunk[..take]);
            }
            tail.extend_from_slice(&chunk[chunk.len().saturating_sub(TAIL)..]);
            if tail.len() > TAIL {
                tail.drain(..tail.len() - TAIL);
            }
            writer.wait_for_capacity(1).await?;
            writer.write(&chunk);
        };
        if let Err(err) = outcome {
            if let Err(abort) = writer.abort().await {
                tracing::warn!(%abort, "could not abort a refused upload");
            }
            return Err(err);
        }
        writer.finish().await?;
        Ok(Received {
            id,
            location,
            name: stored_name(name),
            size,
            sha256: hex(&hasher.finalize()),
            kind: sniff(&head, &tail),
        })
    }

    /// Removes a received file that will not be recorded.
    pub async fn discard(&self, received: Received) {
        if let Err(err) = self.options.objects.delete(&received.location).await {
            tracing::warn!(%err, file = %received.id, "could not remove a refused upload");
        }
    }

    /// Records a received file: purpose and correlationID checked, content checked, then
    /// idempotency. A refused or repeated upload leaves no bytes behind.
    #[instrument(name = "service.files.create", skip_all)]
    pub async fn create(
        &self,
        caller: &Caller,
        purpose: Option<&str>,
        correlation_id: Option<&str>,
        received: Option<Received>,
    ) -> Result<Uploaded, FileError> {
        let mut v = Validation::default();
        let purpose = Purpose::from_part(purpose)
            .map_err(|e| {
                let problem = match e {
                    PurposeError::Missing => Problem::Required,
                    PurposeError::Unknown => Problem::UnknownValue,
                };
                v.add("purpose", problem);
            })
            .ok();
        let correlation_id = match correlation_id {
            None => None,
            Some(c) => CorrelationId::parse("correlationID", c)
                .map_err(|e| v.add(e.field, e.problem))
                .ok(),
        };
        if received.is_none() {
            v.add("file", Problem::Required);
        }
        if let Err(details) = v.finish() {
            if let Some(received) = received {
                self.discard(received).await;
            }
            return Err(FileError::Validation(details));
        }
        let (purpose, received) = (
            purpose.expect("validated above"),
            received.expect("validated above"),
        );
        let Some(kind) = received.kind.filter(|_| received.size > 0) else {
            self.discard(received).await;
            return Err(FileError::Unreadable);
        };
        match self
            .record(caller, purpose, correlation_id.as_ref(), &received, kind)
            .await
        {
            Ok(uploaded) => {
                if !uploaded.created {
                    self.discard(received).await;
                }
                Ok(uploaded)
            }
            Err(err) => {
                self.discard(received).await;
                Err(err)
            }
        }
    }

    async fn record(
        &self,
        caller: &Caller,
        purpose: Purpose,
        correlation_id: Option<&CorrelationId>,
        received: &Received,
        kind: Kind,
    ) -> Result<Uploaded, FileError> {
        let now = self.clock.now_millis();
        let row = FileRow {
            id: received.id.clone(),
            company_id: caller.company_id.clone(),
            purpose: purpose.as_str().to_owned(),
            name: received.name.clone(),
            content_type: kind.content_type().to_owned(),
            size: i64::try_from(received.size).unwrap_or(i64::MAX),
            sha256: received.sha256.clone(),
            correlation_id: correlation_id.map(|c| c.as_str().to_owned()),
            created_at: now,
        };
        let mut tx = self.store.begin().await?;
        if let Some(correlation_id) = correlation_id {
            let hash = idempotency::request_hash(&serde_json::json!({
                "purpose": row.purpose, "sha256": row.sha256,
            }));
            let claim = store::idempotency::claim(
                &mut tx,
                &caller.company_id,
                "file",
                correlation_id.as_str(),
                &hash,
                &row.id,
                now,
            )
            .await?;
            if let Claim::Existing {
                request_hash,
                resource_id,
            } = claim
            {
                drop(tx);
                if request_hash != hash {
                    return Err(FileError::CorrelationIdConflict);
                }
                let file = store::files::find(self.store.pool(), &resource_id)
                    .await?
                    .ok_or(FileError::NotFound)?;
                return Ok(Uploaded {
                    file,
                    created: false,
                });
            }
        }
        store::files::insert(&mut tx, &row).await?;
        tx.commit().await.map_err(StoreError::from)?;
        tracing::info!(file = %row.id, size = row.size, purpose = %row.purpose, "file stored");
        Ok(Uploaded {
            file: row,
            created: true,
        })
    }

    /// A file of the caller's company (404 for any other).
    pub async fn get(&self, caller: &Caller, id: &str) -> Result<FileRow, FileError> {
        store::files::find(self.store.pool(), id)
            .await?
            .filter(|f| f.company_id == caller.company_id)
            .ok_or(FileError::NotFound)
    }

    /// Resolves every id to a file of `company_id` uploaded for `purpose`, or fails on
    /// the first that does not: unknown or another company's is `NotFound`, another
    /// purpose is `PurposeMismatch`. Runs in the consumer's transaction before it saves
    /// anything (seed rule 7).
    pub async fn resolve(
        tx: &mut store::Tx,
        company_id: &str,
        purpose: Purpose,
        ids: &[String],
    ) -> Result<Vec<FileRow>, FileError> {
        let found = store::files::find_many(tx, ids).await?;
        let mut files = Vec::with_capacity(ids.len());
        for id in ids {
            let file = found
                .iter()
                .find(|f| &f.id == id && f.company_id == company_id)
                .ok_or(FileError::NotFound)?;
            if file.purpose != purpose.as_str() {
                return Err(FileError::PurposeMismatch(file.purpose.clone()));
            }
            files.push(file.clone());
        }
        Ok(files)
    }

    async fn key(&self) -> Result<&[u8], FileError> {
        let key = self
            .key
            .get_or_try_init(|| async {
                if let Some(secret) = &self.options.url_secret {
                    return Ok::<_, StoreError>(secret.as_bytes().to_vec());
                }
                let mut candidate = [0u8; 32];
                rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut candidate);
                let mut tx = self.store.begin().await?;
                let value = store::files::secret(
                    &mut tx,
                    "file_url_key",
                    &hex(&candidate),
                    self.clock.now_millis(),
                )
                .await?;
                tx.commit().await?;
                Ok(value.into_bytes())
            })
            .await?;
        Ok(key)
    }

    fn mac(key: &[u8], id: &str, expires: i64) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
        mac.update(format!("{id}.{expires}").as_bytes());
        mac
    }

    /// The path and query of a download link for the file `file_id`, valid for the configured
    /// lifetime: `/api/v1/files/{id}/content?expires=<unix seconds>&signature=<hex>`.
    pub async fn signed_path(&self, file_id: &str) -> Result<String, FileError> {
        let expires = self.clock.now_millis() / 1000
            + i64::try_from(self.options.url_ttl.as_secs()).unwrap_or(i64::MAX / 2);
        let signature = hex(&Self::mac(self.key().await?, file_id, expires)
            .finalize()
            .into_bytes());
        Ok(format!(
            "/api/v1/files/{file_id}/content?expires={expires}&signature={signature}"
        ))
    }

    /// Opens a file through a signed link: the signature must match this id and expiry
    /// (checked in constant time) and the expiry must not have passed.
    #[instrument(name = "service.files.download", skip_all)]
    pub async fn download(
        &self,
        id: &str,
        expires: Option<&str>,
        signature: Option<&str>,
    ) -> Result<Download, FileError> {
        let expires: i64 = expires
            .and_then(|e| e.parse().ok())
            .ok_or(FileError::UrlInvalid)?;
        let signature = signature.and_then(unhex).ok_or(FileError::UrlInvalid)?;
        Self::mac(self.key().await?, id, expires)
            .verify_slice(&signature)
            .map_err(|_| FileError::UrlInvalid)?;
        if self.clock.now_millis() / 1000 > expires {
            return Err(FileError::UrlExpired);
        }
        let file = store::files::find(self.store.pool(), id)
            .await?
            .ok_or(FileError::NotFound)?;
        let object = self
            .options
            .objects
            .get(&Self::location(&file.company_id, &file.id))
            .await
            .map_err(|e| match e {
                object_store::Error::NotFound { .. } => {
                    tracing::error!(file = %file.id, "a recorded file has no bytes in the store");
                    FileError::NotFound
                }
                other => other.into(),
            })?;
        Ok(Download {
            file,
            body: object.into_stream(),
        })
    }
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    // Hex digits only: `from_str_radix` alone also takes a sign, so `+f` read as 0x0f
    // and one signature had several spellings.
    if !text.len().is_multiple_of(2)
        || text.len() > 128
        || !text.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_rejects_garbage() {
        assert_eq!(
            unhex(&hex(&[0, 1, 0xab, 0xff])),
            Some(vec![0, 1, 0xab, 0xff])
        );
        assert_eq!(unhex("abc"), None);
        assert_eq!(unhex("zz"), None);
        assert_eq!(unhex("é1"), None);
        assert_eq!(unhex("+f"), None);
        assert_eq!(unhex("0f+f"), None);
        assert_eq!(unhex("-0"), None);
    }
}
