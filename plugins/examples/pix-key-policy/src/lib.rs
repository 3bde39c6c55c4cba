//! Only the Pix key types in `allowed_types` (default `EMAIL,EVP`) may be registered.
#![no_std]
use cofre_rules_sdk::*;

struct PixKeyPolicy;

impl Rules for PixKeyPolicy {
    fn check_pix_key(request: PixKeyRequest) -> Decision {
        let allowed = config("allowed_types").unwrap_or_else(|| "EMAIL,EVP".to_string());
        if allowed
            .split(',')
            .any(|t| t.trim().eq_ignore_ascii_case(&request.key_type))
        {
            Decision::Allow
        } else {
            log(Level::Info, &alloc_format(&request.key_type));
            deny(
                "PIX_KEY_TYPE_NOT_ALLOWED",
                "This company only registers EMAIL and EVP keys",
            )
        }
    }
}

fn alloc_format(kind: &str) -> String {
    let mut s = String::from("refused a key of type ");
    s.push_str(kind);
    s
}

export_rules!(PixKeyPolicy);
