//! A worst-case cost for a CEL expression, in the units the API server limits (issue 40:
//! 1,000,000 per expression, `celconfig.PerCallLimit`; 10,000,000 per binding,
//! `celconfig.RuntimeCELCostBudget`), following cel-go's runtime cost model
//! (`interpreter/runtimecost.go`): one unit for each identifier, literal, field selection, operator and
//! function call; a comprehension (`all`, `exists`) its range, then its loop condition and step for each
//! element; `in` on a list one unit per element it may compare.
//!
//! Sizes are what the object may hold: every list and map a comprehension or `in` walks is taken at
//! `bound` elements. The figure is an upper bound for objects within that bound, not cel-go's static
//! estimate (which takes unbounded lists at the largest a 3 MiB request can hold); docs/admission.md
//! gives it for each of kix's expressions.

use cel::common::ast::{EntryExpr, Expr, IdedExpr, operators};

/// The worst-case cost of `expression` when every list and map it walks holds `bound` elements.
pub fn estimate(expression: &IdedExpr, bound: u64) -> u64 {
    match &expression.expr {
        Expr::Unspecified | Expr::Ident(_) | Expr::Literal(_) => 1,
        Expr::Select(select) => estimate(&select.operand, bound).saturating_add(1),
        Expr::Call(call) => {
            let mut cost: u64 = 1;
            if let Some(target) = &call.target {
                cost = cost.saturating_add(estimate(target, bound));
            }
            for argument in &call.args {
                cost = cost.saturating_add(estimate(argument, bound));
            }
            if call.func_name == operators::IN && !call.args.get(1).is_some_and(is_map) {
                // Membership in a list compares each element; in a map it is one lookup (counted above).
                cost = cost.saturating_add(bound);
            }
            cost
        }
        Expr::Comprehension(loop_) => {
            let per_element = estimate(&loop_.loop_cond, bound).saturating_add(estimate(&loop_.loop_step, bound));
            estimate(&loop_.iter_range, bound)
                .saturating_add(estimate(&loop_.accu_init, bound))
                .saturating_add(bound.saturating_mul(per_element))
                .saturating_add(estimate(&loop_.result, bound))
        }
        Expr::List(list) => list.elements.iter().fold(1, |cost, e| cost.saturating_add(estimate(e, bound))),
        Expr::Map(map) => map.entries.iter().fold(1, |cost, entry| match &entry.expr {
            EntryExpr::MapEntry(e) => {
                cost.saturating_add(estimate(&e.key, bound)).saturating_add(estimate(&e.value, bound))
            }
            EntryExpr::StructField(f) => cost.saturating_add(estimate(&f.value, bound)),
        }),
        Expr::Struct(s) => s.entries.iter().fold(1, |cost, entry| match &entry.expr {
            EntryExpr::MapEntry(e) => {
                cost.saturating_add(estimate(&e.key, bound)).saturating_add(estimate(&e.value, bound))
            }
            EntryExpr::StructField(f) => cost.saturating_add(estimate(&f.value, bound)),
        }),
    }
}

/// Whether an operand is one of the maps kix's expressions test membership in: a ConfigMap's `data`, a
/// label map (`labels`, `matchLabels`). Without types, everything else is taken as a list (the dearer).
fn is_map(operand: &IdedExpr) -> bool {
    matches!(&operand.expr, Expr::Select(select) if matches!(select.field.as_str(), "data" | "labels" | "matchLabels"))
}

/// The functions and operators of CEL's standard definitions kix's policies may use: any conforming CEL
/// evaluator has them (no optional-field syntax, no Kubernetes library).
pub const PORTABLE_FUNCTIONS: &[&str] = &[
    "has",
    "all",
    "exists",
    "exists_one",
    "size",
    "int",
    "string",
    "@in",
    "!_",
    "_&&_",
    "_||_",
    "_?_:_",
    "_==_",
    "_!=_",
    "_<_",
    "_<=_",
    "_>_",
    "_>=_",
    "_+_",
    "_-_",
    "_[_]",
    "@not_strictly_false",
];

/// The functions `expression` calls that are not in [`PORTABLE_FUNCTIONS`].
pub fn unportable(expression: &IdedExpr) -> Vec<String> {
    let mut found = Vec::new();
    walk(expression, &mut |e| {
        if let Expr::Call(call) = &e.expr
            && !PORTABLE_FUNCTIONS.contains(&call.func_name.as_str())
        {
            found.push(call.func_name.clone());
        }
        if let Expr::Select(select) = &e.expr
            && select.test
        {
            // `has()` is parsed as a test-only selection.
        }
    });
    found.sort();
    found.dedup();
    found
}

fn walk(expression: &IdedExpr, visit: &mut impl FnMut(&IdedExpr)) {
    visit(expression);
    match &expression.expr {
        Expr::Select(select) => walk(&select.operand, visit),
        Expr::Call(call) => {
            if let Some(target) = &call.target {
                walk(target, visit);
            }
            for argument in &call.args {
                walk(argument, visit);
            }
        }
        Expr::Comprehension(loop_) => {
            for part in [&loop_.iter_range, &loop_.accu_init, &loop_.loop_cond, &loop_.loop_step, &loop_.result] {
                walk(part, visit);
            }
        }
        Expr::List(list) => list.elements.iter().for_each(|e| walk(e, visit)),
        Expr::Map(map) => map.entries.iter().for_each(|entry| {
            if let EntryExpr::MapEntry(e) = &entry.expr {
                walk(&e.key, visit);
                walk(&e.value, visit);
            }
        }),
        Expr::Struct(_) | Expr::Unspecified | Expr::Ident(_) | Expr::Literal(_) => {}
    }
}
