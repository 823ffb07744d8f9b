//! (stub)
use crate::cli::{BuildArgs, SelectArgs, VerifyArgs};
use std::process::ExitCode;
pub fn build_command(_a: &BuildArgs) -> ExitCode {
    ExitCode::SUCCESS
}
pub fn check_command(_a: &SelectArgs) -> ExitCode {
    ExitCode::SUCCESS
}
pub fn verify_command(_a: &VerifyArgs) -> ExitCode {
    ExitCode::SUCCESS
}
