//! `cofre demo`: a BaaS company ready to use, on any database, created once and reused.

use tracing::instrument;

use super::Services;
use super::applications::{ApplicationError, NewApplication};
use super::companies::{CompanyError, NewCompany};
use super::directory::{DirectoryError, ImportLine};
use super::features::Feature;
use super::tax_id::TaxId;
use super::users::UserError;

pub const COMPANY_NAME: &str = "Cofre Demo";
pub const COMPANY_TAX_ID: &str = "11.222.333/0001-81";
pub const ADMIN_EMAIL: &str = "admin@demo.cofre.dev";
pub const ADMIN_PASSWORD: &str = "cofre-demo-2026";
const MASTER_NAME: &str = "Demo MASTER";
/// A company user without API_PLUGINS, and platform support; same password as the admin.
pub const MEMBER_EMAIL: &str = "membro@demo.cofre.dev";
pub const SUPPORT_EMAIL: &str = "suporte@cofre.dev";
/// The main account's Pix key, the one demo charges use.
pub const DEMO_PIX_KEY: &str = "cobranca@demo.cofre.dev";

#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DemoCompany {
    pub company_id: String,
    pub main_account_id: String,
    /// Issued anew on every run: only a hash of a secret is ever stored.
    pub master_app_id: String,
    pub admin_email: String,
    pub admin_password: String,
    pub member_email: String,
    pub support_email: String,
    pub base_url: String,
}

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error(transparent)]
    Company(#[from] CompanyError),
    #[error(transparent)]
    Application(#[from] ApplicationError),
    #[error(transparent)]
    User(#[from] UserError),
    #[error(transparent)]
    Directory(#[from] DirectoryError),
    #[error(transparent)]
    Auth(#[from] super::applications::AuthError),
    #[error(transparent)]
    PixKey(#[from] super::pix_keys::PixKeyServiceError),
}

/// A few customers of other banks, so that directory lookups and withdraw keys can be
/// tried at once. The first one is held by the demo company itself.
fn demo_directory() -> Vec<(usize, ImportLine)> {
    let line = |key: &str, kind: &str, name: &str, tax: &str, account: &str| ImportLine {
        key: key.into(),
        kind: kind.into(),
        holder_name: name.into(),
        holder_tax_id: tax.into(),
        ispb: "60701190".into(),
        branch: "0001".into(),
        account_number: account.into(),
        account_type: "CACC".into(),
    };
    vec![
        (
            1,
            line(
                "financeiro@demo-externo.com.br",
                "EMAIL",
                COMPANY_NAME,
                COMPANY_TAX_ID,
                "123456",
            ),
        ),
        (
            2,
            line(
                "11144477735",
                "CPF",
                "Ana Souza",
                "111.444.777-35",
                "654321",
            ),
        ),
        (
            3,
            line(
                "+5511987654321",
                "PHONE",
                "Bruno Lima",
                "529.982.247-25",
                "777001",
            ),
        ),
        (
            4,
            line(
                "6d1f3c0e-8a4b-4c2d-9e7f-0a1b2c3d4e5f",
                "EVP",
                "Loja Externa Ltda",
                "12.ABC.345/01DE-35",
                "880011",
            ),
        ),
    ]
}

/// Creates the demo company on first use and refreshes its credentials afterwards.
#[instrument(name = "service.demo.ensure", skip_all)]
pub async fn ensure(services: &Services, base_url: &str) -> Result<DemoCompany, DemoError> {
    let tax_id = TaxId::parse_cnpj(COMPANY_TAX_ID).expect("the demo tax id is valid");
    let company = match services.companies.find_by_tax_id(&tax_id).await? {
        Some(company) => company,
        None => {
            services
                .companies
                .create(NewCompany {
                    name: COMPANY_NAME.into(),
                    tax_id: COMPANY_TAX_ID.into(),
                    baas: true,
                    admin_email: ADMIN_EMAIL.into(),
                    admin_password: ADMIN_PASSWORD.into(),
                })
                .await?
                .company
        }
    };
    for feature in Feature::ALL {
        services
            .companies
            .set_feature(&company.id, feature, true)
            .await?;
    }
    services
        .users
        .reset_password(ADMIN_EMAIL, ADMIN_PASSWORD)
        .await?;
    for (email, support) in [(MEMBER_EMAIL, false), (SUPPORT_EMAIL, true)] {
        let created = if support {
            services.users.create_support(email, ADMIN_PASSWORD).await
        } else {
            services
                .users
                .create(&company.id, email, ADMIN_PASSWORD, "MEMBER", false)
                .await
        };
        match created {
            Ok(_) => {}
            Err(UserError::EmailTaken) => {
                services.users.reset_password(email, ADMIN_PASSWORD).await?
            }
            Err(e) => return Err(e.into()),
        }
    }
    let main_account = crate::store::accounts::main_of(services.store.pool(), &company.id)
        .await
        .map_err(CompanyError::from)?;
    services
        .companies
        .set_withdraw_key_api(&main_account.id, true)
        .await?;
    services.directory.import(&demo_directory()).await?;

    let existing = services
        .applications
        .list(&company.id)
        .await?
        .into_iter()
        .find(|a| a.name == MASTER_NAME);
    let issued = match existing {
        Some(app) => {
            services
                .applications
                .rotate_secret(&company.id, &app.client_id)
                .await?
        }
        None => {
            let new = NewApplication {
                name: Some(MASTER_NAME.into()),
                kind: Some("MASTER".into()),
                ..Default::default()
            };
            services.applications.create(&company, new).await?
        }
    };
    // A Pix key on the main account, so that charges work at once.
    let caller = services
        .applications
        .authenticate(Some(&issued.app_id))
        .await?;
    let (keys, _) = services.pix_keys.list(&caller).await?;
    if keys.is_empty() {
        services
            .pix_keys
            .create(&caller, Some("EMAIL"), Some(DEMO_PIX_KEY))
            .await?;
    }
    Ok(DemoCompany {
        company_id: company.id,
        main_account_id: main_account.id,
        master_app_id: issued.app_id,
        admin_email: ADMIN_EMAIL.into(),
        admin_password: ADMIN_PASSWORD.into(),
        member_email: MEMBER_EMAIL.into(),
        support_email: SUPPORT_EMAIL.into(),
        base_url: base_url.to_owned(),
    })
}
