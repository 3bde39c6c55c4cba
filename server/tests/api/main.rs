//! Integration tests: the real app on port 0 with a fresh database per test, on SQLite
//! and on Postgres (`COFRE_TEST_POSTGRES_URL`, default the local trust server).

mod helpers;

mod accounts;
mod applications;
mod auth;
mod authorization;
mod bounds;
mod campaign;
mod charges;
mod cli;
mod console;
mod console_security;
mod directory;
mod disputes;
mod errors;
mod files;
mod kyc;
mod logs;
mod money;
mod ops;
mod pix_keys;
mod plugins;
mod receiver;
mod scale_out;
mod store;
mod subscriptions;
mod webhooks;
mod withdraw_keys;
