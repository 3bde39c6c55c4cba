//! Customers: the payers a company names on its charges.

use serde::{Deserialize, Serialize};
use tracing::instrument;

use super::applications::Caller;
use super::clock::SharedClock;
use super::tax_id::TaxId;
use super::{CorrelationId, FieldError, Page, PageInfo, Problem, Validation, users};
use crate::store::{self, Store, StoreError, customers::CustomerRow};

#[derive(Debug, thiserror::Error)]
pub enum CustomerError {
    #[error("invalid fields")]
    Validation(Vec<FieldError>),
    #[error("customer not found")]
    NotFound,
    #[error("a customer with this correlationID already exists")]
    AlreadyExists,
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for CustomerError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::NotFound => CustomerError::NotFound,
            StoreError::Duplicate => CustomerError::AlreadyExists,
            other => CustomerError::Store(other),
        }
    }
}

/// A postal address; every field optional.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Address {
    pub zipcode: Option<String>,
    pub street: Option<String>,
    pub number: Option<String>,
    pub neighborhood: Option<String>,
    pub city: Option<String>,
    pub state: Option<String>,
    pub complement: Option<String>,
    pub country: Option<String>,
}

/// Fields of a customer as a client sends them (create or patch).
#[derive(Clone, Debug, Default)]
pub struct CustomerInput {
    pub name: Option<String>,
    pub email: Option<String>,
    pub phone: Option<String>,
    pub tax_id: Option<String>,
    pub correlation_id: Option<String>,
    pub address: Option<Address>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Customer {
    pub id: String,
    pub correlation_id: String,
    pub name: String,
    pub email: Option<String>,
    pub phone: Option<String>,
    pub tax_id: Option<TaxId>,
    pub address: Option<Address>,
    pub created_at: i64,
    pub updated_at: i64,
}

fn customer(row: CustomerRow) -> Result<Customer, StoreError> {
    Ok(Customer {
        tax_id: row
            .tax_id
            .as_deref()
            .map(TaxId::parse)
            .transpose()
            .map_err(|_| StoreError::Corrupt("customer tax id".into()))?,
        address: row
            .address
            .as_deref()
            .map(serde_json::from_str)
            .transpose()
            .map_err(|_| StoreError::Corrupt("customer address".into()))?,
        id: row.id,
        correlation_id: row.correlation_id,
        name: row.name,
        email: row.email,
        phone: row.phone,
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}

/// Validates the optional fields shared by create and patch, prefixing field names.
fn optional_fields(
    v: &mut Validation,
    prefix: &str,
    input: &CustomerInput,
) -> (Option<String>, Option<String>, Option<String>) {
    let email = input
        .email
        .as_deref()
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(|e| users::parse_email(v, &format!("{prefix}email"), e));
    let phone = input
        .phone
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            let digits: String = p
                .chars()
                .filter(|c| c.is_ascii_digit() || *c == '+')
                .collect();
            if digits.trim_start_matches('+').len() < 10 || digits.len() > 16 {
                v.add(format!("{prefix}phone"), Problem::Invalid);
            }
            digits
        });
    let tax_id = input
        .tax_id
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .and_then(|t| match TaxId::parse(t) {
            Ok(t) => Some(t.as_str().to_owned()),
            Err(_) => {
                v.add(format!("{prefix}taxID"), Problem::Invalid);
                None
            }
        });
    (email, phone, tax_id)
}

#[derive(Clone, Debug)]
pub struct Customers {
    store: Store,
    clock: SharedClock,
}

impl Customers {
    pub fn new(store: Store, clock: SharedClock) -> Self {
        Self { store, clock }
    }

    /// Checks a customer input and makes the row to insert (without saving it).
    pub fn prepare(
        &self,
        company_id: &str,
        prefix: &str,
        input: &CustomerInput,
    ) -> Result<CustomerRow, Vec<FieldError>> {
        let mut v = Validation::default();
        let name = v.text(&format!("{prefix}name"), input.name.as_deref(), 120);
        let (email, phone, tax_id) = optional_fields(&mut v, prefix, input);
        let correlation_id = match input.correlation_id.as_deref() {
            Some(c) => match CorrelationId::parse(&format!("{prefix}correlationID"), c) {
                Ok(c) => c.as_str().to_owned(),
                Err(e) => {
                    v.add(e.field, e.problem);
                    String::new()
                }
            },
            None => uuid::Uuid::new_v4().to_string(),
        };
        v.finish()?;
        let now = self.clock.now_millis();
        Ok(CustomerRow {
            id: store::new_id("cus"),
            company_id: company_id.to_owned(),
            correlation_id,
            name,
            email,
            phone,
            tax_id,
            address: input
                .address
                .as_ref()
                .map(|a| serde_json::to_string(a).expect("address serialises")),
            created_at: now,
            updated_at: now,
        })
    }

    #[instrument(name = "service.customers.create", skip_all, fields(company_id = %caller.company_id))]
    /// Creates a customer. The same correlationID with the same fields answers the
    /// existing customer (`Ok((customer, false))`); with other fields `AlreadyExists`.
    pub async fn create(
        &self,
        caller: &Caller,
        input: CustomerInput,
    ) -> Result<(Customer, bool), CustomerError> {
        let row = self
            .prepare(&caller.company_id, "", &input)
            .map_err(CustomerError::Validation)?;
        let mut tx = self.store.begin().await?;
        match store::customers::insert(&mut tx, &row).await {
            Ok(()) => {}
            Err(StoreError::Duplicate) => {
                drop(tx);
                let existing = store::customers::find(
                    self.store.pool(),
                    &caller.company_id,
                    &row.correlation_id,
                )
                .await?
                .ok_or(CustomerError::NotFound)?;
                let same = (
                    &existing.name,
                    &existing.email,
                    &existing.phone,
                    &existing.tax_id,
                    &existing.address,
                ) == (&row.name, &row.email, &row.phone, &row.tax_id, &row.address);
                return if same {
                    Ok((customer(existing)?, false))
                } else {
                    Err(CustomerError::AlreadyExists)
                };
            }
            Err(e) => return Err(e.into()),
        }
        tx.commit().await.map_err(StoreError::from)?;
        Ok((customer(row)?, true))
    }

    /// A customer of the company, read on the caller's connection.
    pub async fn get_in(
        &self,
        conn: &mut sqlx::AnyConnection,
        company_id: &str,
        id: &str,
    ) -> Result<Customer, CustomerError> {
        let row = store::customers::find(&mut *conn, company_id, id)
            .await?
            .ok_or(CustomerError::NotFound)?;
        Ok(customer(row)?)
    }

    pub async fn get(&self, caller: &Caller, id: &str) -> Result<Customer, CustomerError> {
        let row = store::customers::find(self.store.pool(), &caller.company_id, id)
            .await?
            .ok_or(CustomerError::NotFound)?;
        Ok(customer(row)?)
    }

    pub async fn list(
        &self,
        caller: &Caller,
        page: Page,
    ) -> Result<(Vec<Customer>, PageInfo), CustomerError> {
        let rows =
            store::customers::list(self.store.pool(), &caller.company_id, page.skip, page.limit)
                .await?;
        let total = store::customers::count(self.store.pool(), &caller.company_id).await?;
        Ok((
            rows.into_iter().map(customer).collect::<Result<_, _>>()?,
            page.info(total),
        ))
    }

    /// Changes the fields that are present; the correlationID never changes.
    #[instrument(name = "service.customers.update", skip_all, fields(company_id = %caller.company_id))]
    pub async fn update(
        &self,
        caller: &Caller,
        id: &str,
        input: CustomerInput,
    ) -> Result<Customer, CustomerError> {
        let mut v = Validation::default();
        if input
            .name
            .as_deref()
            .is_some_and(|n| n.trim().is_empty() || n.trim().chars().count() > 120)
        {
            v.add("name", Problem::Invalid);
        }
        let (email, phone, tax_id) = optional_fields(&mut v, "", &input);
        v.finish().map_err(CustomerError::Validation)?;
        let mut tx = self.store.begin().await?;
        let mut row = store::customers::find(&mut *tx, &caller.company_id, id)
            .await?
            .ok_or(CustomerError::NotFound)?;
        if let Some(name) = input.name {
            row.name = name.trim().to_owned();
        }
        row.email = email.or(row.email);
        row.phone = phone.or(row.phone);
        row.tax_id = tax_id.or(row.tax_id);
        if let Some(address) = &input.address {
            row.address = Some(serde_json::to_string(address).expect("address serialises"));
        }
        row.updated_at = self.clock.now_millis();
        store::customers::update(&mut tx, &row).await?;
        tx.commit().await.map_err(StoreError::from)?;
        Ok(customer(row)?)
    }
}
