//! Companies (tenants): created with their main bank account and first admin in one
//! transaction; features switched on and off by support.

use tracing::instrument;

use super::features::Feature;
use super::tax_id::TaxId;
use super::users::{self, Role};
use super::{FieldError, Problem, Validation};
use crate::store::{self, Store, StoreError, accounts::AccountRow, companies::CompanyRow};

#[derive(Debug, thiserror::Error)]
pub enum CompanyError {
    #[error("invalid fields")]
    Validation(Vec<FieldError>),
    #[error("a company with this tax id already exists")]
    TaxIdTaken,
    #[error("a user with this email already exists")]
    EmailTaken,
    #[error("company not found")]
    NotFound,
    #[error("account not found")]
    AccountNotFound,
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for CompanyError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::NotFound => CompanyError::NotFound,
            other => CompanyError::Store(other),
        }
    }
}

/// What `create` needs: the company, whether it runs in BaaS mode, and its first admin.
#[derive(Clone, Debug)]
pub struct NewCompany {
    pub name: String,
    pub tax_id: String,
    pub baas: bool,
    pub admin_email: String,
    pub admin_password: String,
}

#[derive(Clone, Debug)]
pub struct Company {
    pub id: String,
    pub name: String,
    pub tax_id: TaxId,
    pub features: Vec<String>,
}

impl Company {
    pub fn has(&self, feature: Feature) -> bool {
        self.features.iter().any(|f| f == feature.as_str())
    }
}

#[derive(Clone, Debug)]
pub struct CreatedCompany {
    pub company: Company,
    pub main_account_id: String,
    pub admin_user_id: String,
}

#[derive(Clone, Debug)]
pub struct Companies {
    store: Store,
}

impl Companies {
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Creates the company, its main bank account and its first ADMIN user (holding the
    /// API_PLUGINS permission), all or nothing.
    #[instrument(name = "service.companies.create", skip_all)]
    pub async fn create(&self, new: NewCompany) -> Result<CreatedCompany, CompanyError> {
        let mut v = Validation::default();
        let name = v.text("name", Some(&new.name), 120);
        let tax_id = match TaxId::parse_cnpj(&new.tax_id) {
            Ok(t) => Some(t),
            Err(_) => {
                v.add("taxID", Problem::Invalid);
                None
            }
        };
        let email = users::parse_email(&mut v, "adminEmail", &new.admin_email);
        users::check_password(&mut v, "adminPassword", &new.admin_password);
        v.finish().map_err(CompanyError::Validation)?;
        let tax_id = tax_id.expect("validated above");
        let password_hash = users::hash_password(&new.admin_password);

        let now = store::now_millis();
        let company = CompanyRow {
            id: store::new_id("cmp"),
            name,
            tax_id: tax_id.as_str().to_owned(),
            created_at: now,
        };
        let account = AccountRow {
            id: store::new_id("acc"),
            company_id: company.id.clone(),
            is_default: true,
            withdraw_key_api_enabled: false,
            correlation_id: None,
            withdraw_key_id: None,
            created_at: now,
        };
        let admin = store::users::UserRow {
            id: store::new_id("usr"),
            company_id: Some(company.id.clone()),
            email,
            password_hash,
            role: Role::Admin.as_str().to_owned(),
            created_at: now,
        };

        let mut tx = self.store.begin().await?;
        store::companies::insert(&mut tx, &company)
            .await
            .map_err(|e| match e {
                StoreError::Duplicate => CompanyError::TaxIdTaken,
                other => other.into(),
            })?;
        store::accounts::insert(&mut tx, &account).await?;
        store::users::insert(&mut tx, &admin)
            .await
            .map_err(|e| match e {
                StoreError::Duplicate => CompanyError::EmailTaken,
                other => other.into(),
            })?;
        store::users::grant(&mut tx, &admin.id, users::API_PLUGINS, now).await?;
        if new.baas {
            store::companies::enable_feature(&mut tx, &company.id, Feature::Baas.as_str(), now)
                .await?;
        }
        tx.commit().await.map_err(StoreError::from)?;

        tracing::info!(company_id = %company.id, "company created");
        Ok(CreatedCompany {
            company: Company {
                id: company.id,
                name: company.name,
                tax_id,
                features: if new.baas {
                    vec![Feature::Baas.as_str().to_owned()]
                } else {
                    vec![]
                },
            },
            main_account_id: account.id,
            admin_user_id: admin.id,
        })
    }

    pub async fn get(&self, id: &str) -> Result<Company, CompanyError> {
        let row = store::companies::get(self.store.pool(), id).await?;
        let features = store::companies::features(self.store.pool(), id).await?;
        Ok(Company {
            tax_id: TaxId::parse(&row.tax_id)
                .map_err(|_| StoreError::Corrupt(format!("tax id of company {id}")))?,
            id: row.id,
            name: row.name,
            features,
        })
    }

    pub async fn find_by_tax_id(&self, tax_id: &TaxId) -> Result<Option<Company>, CompanyError> {
        match store::companies::find_by_tax_id(self.store.pool(), tax_id.as_str()).await? {
            Some(row) => self.get(&row.id).await.map(Some),
            None => Ok(None),
        }
    }

    /// Switches a company feature on or off; repeating either is harmless.
    #[instrument(name = "service.companies.set_feature", skip(self))]
    pub async fn set_feature(
        &self,
        company_id: &str,
        feature: Feature,
        enabled: bool,
    ) -> Result<(), CompanyError> {
        let mut tx = self.store.begin().await?;
        store::companies::get(&mut *tx, company_id).await?;
        if enabled {
            store::companies::enable_feature(
                &mut tx,
                company_id,
                feature.as_str(),
                store::now_millis(),
            )
            .await?;
        } else {
            store::companies::disable_feature(&mut tx, company_id, feature.as_str()).await?;
        }
        tx.commit().await.map_err(StoreError::from)?;
        Ok(())
    }

    /// Enables or disables the withdraw key API of one account (support only).
    #[instrument(name = "service.companies.set_withdraw_key_api", skip(self))]
    pub async fn set_withdraw_key_api(
        &self,
        account_id: &str,
        enabled: bool,
    ) -> Result<(), CompanyError> {
        let mut tx = self.store.begin().await?;
        store::accounts::set_withdraw_key_api(&mut tx, account_id, enabled)
            .await
            .map_err(|e| match e {
                StoreError::NotFound => CompanyError::AccountNotFound,
                other => other.into(),
            })?;
        tx.commit().await.map_err(StoreError::from)?;
        Ok(())
    }
}
