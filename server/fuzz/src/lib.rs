//! The parsers under fuzz, compiled from the server's own source files.
//!
//! Depending on the `cofre-server` library would build wasmtime, sqlx, leptos and the
//! rest with coverage instrumentation (a cold build of tens of minutes on two cores) to
//! fuzz a few pure functions. Instead each module is the very same file as in the
//! server, included with `#[path]`: `service` here mirrors `crate::service` there, so
//! the modules' `super::` paths (`super::tax_id::TaxId` in `pix_key.rs`) resolve the same
//! way. Only modules without I/O and with small dependencies are included; their extra
//! crates are pinned in Cargo.toml at the versions of the server's Cargo.lock.
//!
//! Beside them, [`reference`] holds independent readings of the rules (written from the
//! Receita Federal and FEBRABAN texts, not from the server code) for differential checks.

#![forbid(unsafe_code)]

#[path = "../../src/service"]
#[allow(dead_code)]
pub mod service {
    #[path = "boleto.rs"]
    pub mod boleto;
    #[path = "br_code.rs"]
    pub mod br_code;
    #[path = "pix_key.rs"]
    pub mod pix_key;
    #[path = "tax_id.rs"]
    pub mod tax_id;
    /// `files.rs` itself needs the store and the object store; its upload-form parsing
    /// lives in this submodule so that it can be fuzzed alone.
    pub mod files {
        #[path = "form.rs"]
        pub mod form;
    }
}

pub mod reference;
