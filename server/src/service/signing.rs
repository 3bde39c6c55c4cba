//! Webhook signatures: `x-webhook-signature` is the base64 RSA PKCS#1 v1.5 SHA-256
//! signature of the exact body bytes, made with a 2048-bit key that Cofre generates on
//! first use and publishes (SPKI PEM) with its `key_identifier`, the SHA-256 of the DER
//! public key, so that receivers accept any listed key during a rotation.
//!
//! Keys are made and published with the `rsa` crate; deliveries are signed with `ring`,
//! whose RSA is several times faster (signing is the cost of every delivery).

use std::sync::{Arc, RwLock};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ring::rand::SystemRandom;
use ring::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
use rsa::pkcs8::{DecodePrivateKey, EncodePrivateKey, EncodePublicKey, LineEnding};
use rsa::{RsaPrivateKey, RsaPublicKey};
use sha2::{Digest, Sha256};

use crate::store::{self, Store, StoreError, events::KeyRow};

pub const KEY_BITS: usize = 2048;

/// A published key: what receivers verify with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicKey {
    pub key_identifier: String,
    pub is_current: bool,
    pub pem: String,
}

/// Lower-case hexadecimal of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A new key pair as it is stored.
pub fn generate(now: i64) -> Result<KeyRow, rsa::Error> {
    let private = RsaPrivateKey::new(&mut rand::rngs::OsRng, KEY_BITS)?;
    key_row(&private, now)
}

fn key_row(private: &RsaPrivateKey, now: i64) -> Result<KeyRow, rsa::Error> {
    let public = RsaPublicKey::from(private);
    let der = public
        .to_public_key_der()
        .map_err(|_| rsa::Error::Internal)?;
    Ok(KeyRow {
        key_identifier: hex(&Sha256::digest(der.as_bytes())),
        private_key_pem: private
            .to_pkcs8_pem(LineEnding::LF)
            .map_err(|_| rsa::Error::Internal)?
            .to_string(),
        public_key_pem: public
            .to_public_key_pem(LineEnding::LF)
            .map_err(|_| rsa::Error::Internal)?,
        is_current: true,
        created_at: now,
    })
}

/// A stored PKCS#8 PEM key, ready to sign.
fn signing_key(private_pem: &str) -> Result<RsaKeyPair, String> {
    let key = RsaPrivateKey::from_pkcs8_pem(private_pem).map_err(|e| e.to_string())?;
    let der = key.to_pkcs8_der().map_err(|e| e.to_string())?;
    RsaKeyPair::from_pkcs8(der.as_bytes()).map_err(|e| e.to_string())
}

/// Signs `body` with a PKCS#8 PEM private key; base64 of the signature.
pub fn sign_with(private_pem: &str, body: &[u8]) -> Result<String, String> {
    sign(&signing_key(private_pem)?, body)
}

fn sign(key: &RsaKeyPair, body: &[u8]) -> Result<String, String> {
    let mut signature = vec![0; key.public().modulus_len()];
    key.sign(
        &RSA_PKCS1_SHA256,
        &SystemRandom::new(),
        body,
        &mut signature,
    )
    .map_err(|e| e.to_string())?;
    Ok(STANDARD.encode(signature))
}

/// A parsed signing key and the identifier of the stored key it came from.
type CachedKey = (String, Arc<RsaKeyPair>);

/// The current signing key, parsed once and re-read when another process rotates it.
#[derive(Clone, Debug)]
pub struct Signer {
    store: Store,
    cached: Arc<RwLock<Option<CachedKey>>>,
    /// Held while this process makes the first key, so that concurrent deliveries wait
    /// for that one key instead of each generating their own.
    generating: Arc<tokio::sync::Mutex<()>>,
    /// Keys this process generated (for the test that concurrent first deliveries make one).
    generated: Arc<std::sync::atomic::AtomicUsize>,
}

impl Signer {
    pub fn new(store: Store) -> Self {
        Self {
            store,
            cached: Arc::new(RwLock::new(None)),
            generating: Arc::new(tokio::sync::Mutex::new(())),
            generated: Arc::default(),
        }
    }

    /// How many keys this process has generated.
    pub fn keys_generated(&self) -> usize {
        self.generated.load(std::sync::atomic::Ordering::Relaxed)
    }

    async fn stored_current(&self) -> Result<Option<KeyRow>, StoreError> {
        Ok(store::events::keys(self.store.pool())
            .await?
            .into_iter()
            .find(|k| k.is_current))
    }

    /// The current key, generating the first one if there is none yet.
    pub async fn current(&self, now: i64) -> Result<KeyRow, StoreError> {
        if let Some(k) = self.stored_current().await? {
            return Ok(k);
        }
        // One RSA key generation per process (a CPU-bound second or more): the first
        // delivery round after a fresh start or a crash would otherwise make one per
        // delivery in flight.
        let _generating = self.generating.lock().await;
        if let Some(k) = self.stored_current().await? {
            return Ok(k);
        }
        let row = tokio::task::spawn_blocking(move || generate(now))
            .await
            .map_err(|e| StoreError::Corrupt(e.to_string()))?
            .map_err(|e| StoreError::Corrupt(format!("key generation: {e}")))?;
        self.generated
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut tx = self.store.begin().await?;
        match store::events::insert_current_key(&mut tx, &row, false).await {
            Ok(()) => tx.commit().await.map_err(StoreError::from)?,
            // Another process made the first key at the same moment: use that one. The
            // transaction ends before the read below, which takes another connection:
            // held open, it would keep SQLite's write lock while waiting for a pool
            // connection that the writers queued behind that lock are holding.
            Err(StoreError::Duplicate) => tx.rollback().await.map_err(StoreError::from)?,
            Err(e) => return Err(e),
        }
        self.stored_current()
            .await?
            .ok_or_else(|| StoreError::Corrupt("no current webhook key".into()))
    }

    /// Signs `body` with the current key: `(key_identifier, base64 signature)`.
    pub async fn sign(&self, body: &[u8], now: i64) -> Result<(String, String), StoreError> {
        let current = self.current(now).await?;
        let cached = self
            .cached
            .read()
            .expect("signer lock")
            .as_ref()
            .filter(|(id, _)| *id == current.key_identifier)
            .map(|(_, k)| k.clone());
        let key = match cached {
            Some(key) => key,
            None => {
                let key = Arc::new(
                    signing_key(&current.private_key_pem)
                        .map_err(|e| StoreError::Corrupt(format!("webhook key: {e}")))?,
                );
                *self.cached.write().expect("signer lock") =
                    Some((current.key_identifier.clone(), key.clone()));
                key
            }
        };
        let body = body.to_vec();
        let signature = tokio::task::spawn_blocking(move || sign(&key, &body))
            .await
            .map_err(|e| StoreError::Corrupt(e.to_string()))?
            .map_err(|e| StoreError::Corrupt(format!("signing: {e}")))?;
        Ok((current.key_identifier, signature))
    }

    /// Every key, newest first (the current one and those it replaced).
    pub async fn public_keys(&self, now: i64) -> Result<Vec<PublicKey>, StoreError> {
        self.current(now).await?;
        Ok(store::events::keys(self.store.pool())
            .await?
            .into_iter()
            .map(|k| PublicKey {
                key_identifier: k.key_identifier,
                is_current: k.is_current,
                pem: k.public_key_pem,
            })
            .collect())
    }

    /// Makes a new current key; the old ones stay published.
    pub async fn rotate(&self, now: i64) -> Result<PublicKey, StoreError> {
        let row = tokio::task::spawn_blocking(move || generate(now))
            .await
            .map_err(|e| StoreError::Corrupt(e.to_string()))?
            .map_err(|e| StoreError::Corrupt(format!("key generation: {e}")))?;
        let mut tx = self.store.begin().await?;
        store::events::insert_current_key(&mut tx, &row, true).await?;
        tx.commit().await.map_err(StoreError::from)?;
        Ok(PublicKey {
            key_identifier: row.key_identifier,
            is_current: true,
            pem: row.public_key_pem,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsa::pkcs1v15::{Signature, VerifyingKey};
    use rsa::pkcs8::DecodePublicKey;
    use rsa::signature::Verifier;

    /// A fixed 2048-bit test key (generated with `openssl genpkey -algorithm RSA
    /// -pkeyopt rsa_keygen_bits:2048`) and the signature openssl made of the body:
    /// `printf '{"event":"OPENPIX:CHARGE_COMPLETED"}' | openssl dgst -sha256 -sign key.pem | base64 -w0`.
    const KEY: &str = include_str!("../../tests/fixtures/webhook-test-key.pem");
    const BODY: &[u8] = br#"{"event":"OPENPIX:CHARGE_COMPLETED"}"#;
    const OPENSSL_SIGNATURE: &str = include_str!("../../tests/fixtures/webhook-test-signature.b64");

    #[test]
    fn signatures_match_openssl_for_a_fixed_vector() {
        // PKCS#1 v1.5 is deterministic: the same key and body give openssl's bytes.
        assert_eq!(sign_with(KEY, BODY).unwrap(), OPENSSL_SIGNATURE.trim());
    }

    #[test]
    fn the_published_key_verifies_and_is_identified_by_its_der_hash() {
        let private = RsaPrivateKey::from_pkcs8_pem(KEY).unwrap();
        let row = key_row(&private, 0).unwrap();
        let public = RsaPublicKey::from_public_key_pem(&row.public_key_pem).unwrap();
        let der = public.to_public_key_der().unwrap();
        assert_eq!(row.key_identifier, hex(&Sha256::digest(der.as_bytes())));
        let signature = STANDARD.decode(sign_with(KEY, BODY).unwrap()).unwrap();
        let verifying = VerifyingKey::<Sha256>::new(public);
        assert!(
            verifying
                .verify(BODY, &Signature::try_from(signature.as_slice()).unwrap())
                .is_ok()
        );
        assert!(
            verifying
                .verify(
                    b"tampered",
                    &Signature::try_from(signature.as_slice()).unwrap()
                )
                .is_err()
        );
    }
}
