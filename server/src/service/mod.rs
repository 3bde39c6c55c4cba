//! The domain. Every rule lives here; REST handlers, console server fns and the CLI
//! call these services and nothing else. Each module owns one error enum; the http
//! layer maps them to status codes and stable `code`s in one place.

pub mod applications;
pub mod companies;
pub mod demo;
pub mod directory;
pub mod features;
pub mod pix_key;
pub mod scopes;
pub mod tax_id;
pub mod users;

use crate::store::{Store, StoreError};

/// One invalid field of a request: which field and what is wrong with it. The http
/// layer turns `problem` into a translated message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub problem: Problem,
}

/// What is wrong with a field; a closed list so that every message can be translated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Problem {
    Required,
    TooLong { max: usize },
    Invalid,
    UnknownValue,
    NotAllowedForType,
}

impl FieldError {
    pub fn new(field: impl Into<String>, problem: Problem) -> Self {
        Self {
            field: field.into(),
            problem,
        }
    }
}

/// Collects field errors so that one answer lists every invalid field at once.
#[derive(Default, Debug)]
pub struct Validation(Vec<FieldError>);

impl Validation {
    pub fn add(&mut self, field: impl Into<String>, problem: Problem) {
        self.0.push(FieldError::new(field, problem));
    }

    /// A required, trimmed text of at most `max` characters.
    pub fn text(&mut self, field: &str, value: Option<&str>, max: usize) -> String {
        let value = value.map(str::trim).unwrap_or_default();
        if value.is_empty() {
            self.add(field, Problem::Required);
        } else if value.chars().count() > max {
            self.add(field, Problem::TooLong { max });
        }
        value.to_owned()
    }

    pub fn finish(self) -> Result<(), Vec<FieldError>> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(self.0)
        }
    }
}

/// All services over one store; cheap to clone.
#[derive(Clone, Debug)]
pub struct Services {
    pub store: Store,
    pub companies: companies::Companies,
    pub users: users::Users,
    pub applications: applications::Applications,
    pub directory: directory::Directory,
}

impl Services {
    pub fn new(store: Store) -> Self {
        Self {
            companies: companies::Companies::new(store.clone()),
            users: users::Users::new(store.clone()),
            applications: applications::Applications::new(store.clone()),
            directory: directory::Directory::new(store.clone()),
            store,
        }
    }
}

/// Database failures that no caller can fix; every service error has this variant.
#[derive(Debug, thiserror::Error)]
#[error("storage failure: {0}")]
pub struct Unexpected(#[from] pub StoreError);
