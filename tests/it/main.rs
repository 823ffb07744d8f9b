//! kix's one integration-test binary (ripgrep's layout): one module per area, all sharing
//! `support` (trees, goldens and the [`support::Test`] builder that runs the real binary).
//! tests/README.md describes the fixture directories, blessing and the environment.

mod support;

mod admission;
mod architecture;
mod argocd;
mod audit;
mod build;
mod capacity;
mod causes;
mod conventions;
mod custom_resources;
mod explain;
mod explain_emitted;
mod flux;
mod formats;
mod friction;
mod groups;
mod groups_across;
mod guide;
mod hazards;
mod init;
mod invariants;
mod lint;
mod operator_budgets;
mod precommit;
mod realworld;
mod rebuild;
mod release;
mod report;
mod reuse;
mod scale_down;
mod schema;
mod schema_files;
mod shared_world;
mod sim_cli;
mod verify;
mod volumes;
