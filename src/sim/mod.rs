//! The scheduler model: a faithful, in-memory kube-scheduler for one profile.
//!
//! (Being built: see issue 3.)

pub mod cluster;
pub mod objects;
pub mod plugins;
pub mod quantity;

use crate::cli::{ScheduleArgs, SimulateArgs};
use crate::diag::Diagnostics;

/// `kix schedule`: returns the report to print on stdout.
pub fn schedule_command(_args: &ScheduleArgs) -> Result<String, Diagnostics> {
    Ok(String::new())
}

/// `kix simulate`: returns the report to print on stdout.
pub fn simulate_command(_args: &SimulateArgs) -> Result<String, Diagnostics> {
    Ok(String::new())
}
