//! The scopes an application may hold, grouped by resource. `RESOURCE_VERB` names;
//! the seed names five, the rest follow the same pattern. Served as-is by
//! `GET /api/v1/application/scopes`. A scope name, once shipped, never changes.

use serde::Serialize;

/// One scope: its name, what it allows, and whether only a MASTER application may hold it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    pub name: &'static str,
    pub description: &'static str,
    pub master_only: bool,
}

#[derive(Clone, Copy, Debug, Serialize, utoipa::ToSchema)]
pub struct ScopeGroup {
    pub group: &'static str,
    pub scopes: &'static [Scope],
}

const fn scope(name: &'static str, description: &'static str) -> Scope {
    Scope {
        name,
        description,
        master_only: false,
    }
}

const fn master(name: &'static str, description: &'static str) -> Scope {
    Scope {
        name,
        description,
        master_only: true,
    }
}

pub const ACCOUNT_GET: Scope = scope("ACCOUNT_GET", "Read bank accounts and balances");
pub const ACCOUNT_POST: Scope = master("ACCOUNT_POST", "Create bank accounts (one per campaign)");
pub const APPLICATION_POST: Scope = master("APPLICATION_POST", "Create applications (AppIDs)");
pub const APPLICATION_ROTATE_POST: Scope = master(
    "APPLICATION_ROTATE_POST",
    "Rotate the client secret of an application",
);
pub const PIX_KEY_GET: Scope = scope("PIX_KEY_GET", "List the account's Pix keys");
pub const PIX_KEY_POST: Scope = scope("PIX_KEY_POST", "Register Pix keys");
pub const PIX_KEY_PUT: Scope = scope("PIX_KEY_PUT", "Choose the account's default Pix key");
pub const PIX_KEY_DELETE: Scope = scope("PIX_KEY_DELETE", "Delete Pix keys");
pub const PIX_KEY_CHECK_GET: Scope =
    scope("PIX_KEY_CHECK_GET", "Look up keys in the Pix directory");
pub const PIX_KEY_WITHDRAW_POST: Scope = scope(
    "PIX_KEY_WITHDRAW_POST",
    "Register and select the account's withdraw key",
);
pub const PIX_KEY_WITHDRAW_PUT: Scope = scope(
    "PIX_KEY_WITHDRAW_PUT",
    "Select an already registered withdraw key",
);
pub const ACCOUNT_WITHDRAW_POST: Scope = scope(
    "ACCOUNT_WITHDRAW_POST",
    "Withdraw from the account to its withdraw key",
);
pub const CUSTOMER_GET: Scope = scope("CUSTOMER_GET", "Read customers");
pub const CUSTOMER_POST: Scope = scope("CUSTOMER_POST", "Create customers");
pub const CUSTOMER_PATCH: Scope = scope("CUSTOMER_PATCH", "Update customers");
pub const CHARGE_GET: Scope = scope("CHARGE_GET", "Read charges");
pub const CHARGE_POST: Scope = scope("CHARGE_POST", "Create charges");
pub const CHARGE_DELETE: Scope = scope("CHARGE_DELETE", "Delete charges that received no money");
pub const QRCODE_STATIC_GET: Scope = scope("QRCODE_STATIC_GET", "Read static QR codes");
pub const QRCODE_STATIC_POST: Scope = scope("QRCODE_STATIC_POST", "Create static QR codes");
pub const REFUND_GET: Scope = scope("REFUND_GET", "Read refunds");
pub const REFUND_POST: Scope = scope("REFUND_POST", "Refund received Pix");
pub const STATEMENT_GET: Scope = scope("STATEMENT_GET", "Read the account statement");
pub const TRANSACTION_GET: Scope = scope("TRANSACTION_GET", "Read transactions");
pub const SANDBOX_POST: Scope = scope(
    "SANDBOX_POST",
    "Simulate payers and disputes (sandbox only)",
);
pub const WEBHOOK_GET: Scope = scope("WEBHOOK_GET", "Read webhooks and their deliveries");
pub const WEBHOOK_POST: Scope = scope("WEBHOOK_POST", "Register webhooks and resend deliveries");
pub const WEBHOOK_DELETE: Scope = scope("WEBHOOK_DELETE", "Delete webhooks");
pub const PLUGIN_GET: Scope = master("PLUGIN_GET", "Read plugins and their invocations");
pub const PLUGIN_POST: Scope = master("PLUGIN_POST", "Upload plugins");
pub const PLUGIN_PUT: Scope = master("PLUGIN_PUT", "Bind plugins to hooks and accounts");
pub const PLUGIN_DELETE: Scope = master("PLUGIN_DELETE", "Delete plugins");
pub const FILE_POST: Scope = scope("FILE_POST", "Upload files");
pub const FILE_GET: Scope = scope("FILE_GET", "Read files and get new download links");
pub const DISPUTE_GET: Scope = scope("DISPUTE_GET", "Read disputes");
pub const DISPUTE_EVIDENCE_POST: Scope =
    scope("DISPUTE_EVIDENCE_POST", "Send evidence for disputes");
pub const KYC_ONBOARDING_POST: Scope =
    master("KYC_ONBOARDING_POST", "Submit KYC onboardings (MASTER)");
pub const KYC_ONBOARDING_GET: Scope = master(
    "KYC_ONBOARDING_GET",
    "Read KYC onboardings and their representatives (MASTER)",
);
pub const SUBSCRIPTION_GET: Scope = scope(
    "SUBSCRIPTION_GET",
    "Read subscriptions and their instalments",
);
pub const SUBSCRIPTION_POST: Scope = scope("SUBSCRIPTION_POST", "Create subscriptions");
pub const SUBSCRIPTION_PUT: Scope = scope("SUBSCRIPTION_PUT", "Cancel subscriptions");
pub const SUBSCRIPTION_PAYMENT_BOOK_GET: Scope = scope(
    "SUBSCRIPTION_PAYMENT_BOOK_GET",
    "Issue and download a subscription's payment book",
);

/// Every scope, grouped by resource.
pub const GROUPS: &[ScopeGroup] = &[
    ScopeGroup {
        group: "ACCOUNT",
        scopes: &[ACCOUNT_GET, ACCOUNT_POST, ACCOUNT_WITHDRAW_POST],
    },
    ScopeGroup {
        group: "APPLICATION",
        scopes: &[APPLICATION_POST, APPLICATION_ROTATE_POST],
    },
    ScopeGroup {
        group: "PIX_KEY",
        scopes: &[
            PIX_KEY_GET,
            PIX_KEY_POST,
            PIX_KEY_PUT,
            PIX_KEY_DELETE,
            PIX_KEY_CHECK_GET,
            PIX_KEY_WITHDRAW_POST,
            PIX_KEY_WITHDRAW_PUT,
        ],
    },
    ScopeGroup {
        group: "CUSTOMER",
        scopes: &[CUSTOMER_GET, CUSTOMER_POST, CUSTOMER_PATCH],
    },
    ScopeGroup {
        group: "CHARGE",
        scopes: &[CHARGE_GET, CHARGE_POST, CHARGE_DELETE],
    },
    ScopeGroup {
        group: "QRCODE",
        scopes: &[QRCODE_STATIC_GET, QRCODE_STATIC_POST],
    },
    ScopeGroup {
        group: "REFUND",
        scopes: &[REFUND_GET, REFUND_POST],
    },
    ScopeGroup {
        group: "STATEMENT",
        scopes: &[STATEMENT_GET, TRANSACTION_GET],
    },
    ScopeGroup {
        group: "SANDBOX",
        scopes: &[SANDBOX_POST],
    },
    ScopeGroup {
        group: "PLUGIN",
        scopes: &[PLUGIN_GET, PLUGIN_POST, PLUGIN_PUT, PLUGIN_DELETE],
    },
    ScopeGroup {
        group: "WEBHOOK",
        scopes: &[WEBHOOK_GET, WEBHOOK_POST, WEBHOOK_DELETE],
    },
    ScopeGroup {
        group: "FILE",
        scopes: &[FILE_POST, FILE_GET],
    },
    ScopeGroup {
        group: "DISPUTE",
        scopes: &[DISPUTE_GET, DISPUTE_EVIDENCE_POST],
    },
    ScopeGroup {
        group: "KYC",
        scopes: &[KYC_ONBOARDING_POST, KYC_ONBOARDING_GET],
    },
    ScopeGroup {
        group: "SUBSCRIPTION",
        scopes: &[
            SUBSCRIPTION_GET,
            SUBSCRIPTION_POST,
            SUBSCRIPTION_PUT,
            SUBSCRIPTION_PAYMENT_BOOK_GET,
        ],
    },
];

pub fn all() -> impl Iterator<Item = &'static Scope> {
    GROUPS.iter().flat_map(|g| g.scopes.iter())
}

/// Looks a scope up by its name.
pub fn find(name: &str) -> Option<&'static Scope> {
    all().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_follow_resource_verb() {
        let mut names: Vec<_> = all().map(|s| s.name).collect();
        let count = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), count);
        for name in names {
            let verb = name.rsplit('_').next().unwrap();
            assert!(
                ["GET", "POST", "PUT", "DELETE", "PATCH"].contains(&verb),
                "{name}"
            );
        }
    }

    #[test]
    fn the_five_scopes_of_the_seed_exist() {
        for name in [
            "PIX_KEY_WITHDRAW_POST",
            "PIX_KEY_WITHDRAW_PUT",
            "FILE_POST",
            "APPLICATION_ROTATE_POST",
            "SUBSCRIPTION_PAYMENT_BOOK_GET",
        ] {
            assert!(find(name).is_some(), "{name}");
        }
    }
}
