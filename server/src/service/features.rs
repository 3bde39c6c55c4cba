//! Company-level feature switches (CONTRACT.md "Tenancy"). Only support turns them on.

use std::fmt;
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Feature {
    /// Bank-as-a-service mode: the company may run one account per campaign.
    Baas,
    DisputeEvidenceFileId,
    MasterAppReadAnyAccount,
    Split,
    Subaccount,
    KycOnboardingLink,
}

impl Feature {
    pub const ALL: [Feature; 6] = [
        Feature::Baas,
        Feature::DisputeEvidenceFileId,
        Feature::MasterAppReadAnyAccount,
        Feature::Split,
        Feature::Subaccount,
        Feature::KycOnboardingLink,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Feature::Baas => "BAAS",
            Feature::DisputeEvidenceFileId => "DISPUTE_EVIDENCE_FILE_ID",
            Feature::MasterAppReadAnyAccount => "MASTER_APP_READ_ANY_ACCOUNT",
            Feature::Split => "SPLIT",
            Feature::Subaccount => "SUBACCOUNT",
            Feature::KycOnboardingLink => "KYC_ONBOARDING_LINK",
        }
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, thiserror::Error)]
#[error(
    "unknown feature {0:?}; known: BAAS, DISPUTE_EVIDENCE_FILE_ID, MASTER_APP_READ_ANY_ACCOUNT, SPLIT, SUBACCOUNT, KYC_ONBOARDING_LINK"
)]
pub struct UnknownFeature(pub String);

impl FromStr for Feature {
    type Err = UnknownFeature;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_uppercase();
        Feature::ALL
            .into_iter()
            .find(|f| f.as_str() == wanted)
            .ok_or_else(|| UnknownFeature(s.to_owned()))
    }
}
