//! Integration tests: the real app on port 0 with a fresh database per test, on SQLite
//! and on Postgres (`COFRE_TEST_POSTGRES_URL`, default the local trust server).

mod helpers;

mod applications;
mod auth;
mod cli;
mod console;
mod errors;
mod ops;
mod store;
