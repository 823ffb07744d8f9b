//! kix-sim's corpora, one libtest-mimic trial per case (crates/sim/README.md): each upstream
//! scheduler table case of `tests/conformance/*.yaml` (`conformance::<file>::<upstream test>::<case>`)
//! and each snapshot of `tests/snapshots/` (`snapshots::<case>`). A failing case names itself and
//! the others still run; `cargo test -p kix-sim --test sim_corpus -- snapshots::` runs one corpus.
//! A harness = false target, so the model's ordinary `#[test]`s live in `sim_model`.

#[path = "../support/mod.rs"]
mod support;

mod conformance;
mod snapshots;

use libtest_mimic::{Arguments, Trial};

fn main() {
    let args = Arguments::from_args();
    let mut trials: Vec<Trial> = Vec::new();
    trials.extend(conformance::trials());
    trials.extend(snapshots::trials());
    let total = trials.len() as u64;
    let conclusion = libtest_mimic::run(&args, trials);
    // Every case ran (or was filtered out by the command line): none is skipped silently.
    if !args.list {
        let accounted =
            conclusion.num_passed + conclusion.num_failed + conclusion.num_ignored + conclusion.num_filtered_out;
        assert_eq!(accounted, total, "cases run or filtered out ({accounted}) differ from the cases found ({total})");
    }
    conclusion.exit();
}
