//! The label index gives the rules exactly what matching every workload of the namespace gave (issue 42,
//! part 3): for every spread constraint's selector (K0703, K0723) and every budget's (K07xx budgets), the
//! workloads selected through [`Set::candidates`] and [`super::budgets::selected`] are the workloads a scan
//! of the namespace selects, in the same order, on every `tests/lint` case and on a generated namespace
//! whose selectors use `matchLabels`, `matchExpressions`, both, and neither.

use super::set::Set;
use super::{Input, files, pod_spec::SelectorField, set};
use kix_diag::Diagnostics;

/// The set and label index lint reads `inputs` into.
fn read(inputs: &[Input]) -> Set {
    let mut diagnostics = Diagnostics::default();
    let inputs = files::list(inputs, &mut diagnostics);
    let kinds = kix_kube::operators::KindTable::new(Vec::new());
    let mut objects = Vec::new();
    let mut names = super::accepted::ObjectNames::default();
    let mut collector = set::Collector::new(&kinds);
    for input in &inputs {
        let file: std::sync::Arc<std::path::Path> = input.path().into();
        input.each_document(&mut diagnostics, |document| {
            objects.push(super::accepted::object(&document, &file, &mut names, &mut Diagnostics::default()));
            collector.take(objects.len() - 1, document, &mut Diagnostics::default());
        });
    }
    collector.finish(&objects, &inputs, &mut diagnostics)
}

/// Every selection through the index against the scan; how many selectors were compared and how many
/// workloads they selected.
fn compare(set: &Set) -> (usize, usize) {
    let index = set.label_index();
    let (mut compared, mut selected) = (0, 0);
    for target in &set.workloads {
        for constraint in &target.constraints {
            let SelectorField::Set(selector) = &constraint.selector else { continue };
            let indexed: Vec<usize> = set
                .candidates(&index, target, selector)
                .filter(|o| selector.matches(o.pod_labels()))
                .map(|o| o.object)
                .collect();
            let scanned: Vec<usize> =
                set.neighbours(target).filter(|o| selector.matches(o.pod_labels())).map(|o| o.object).collect();
            assert_eq!(indexed, scanned, "{}'s constraint", target.name);
            compared += 1;
            selected += scanned.len();
        }
    }
    for budget in &set.budgets {
        let indexed: Vec<usize> = super::budgets::selected(set, &index, budget).iter().map(|w| w.object).collect();
        let scanned: Vec<usize> = match &budget.selector {
            Some(selector) => set
                .in_namespace(&budget.namespace)
                .filter(|w| selector.matches(w.pod_labels()))
                .map(|w| w.object)
                .collect(),
            None => Vec::new(),
        };
        assert_eq!(indexed, scanned, "{}", budget.label());
        compared += 1;
        selected += scanned.len();
    }
    (compared, selected)
}

#[test]
fn the_index_selects_what_a_scan_of_the_namespace_selects() {
    let cases = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/lint");
    let mut compared = 0;
    for case in std::fs::read_dir(&cases).unwrap() {
        let case = case.unwrap().path();
        if case.is_dir() {
            compared += compare(&read(&[Input::Path(case)])).0;
        }
    }
    assert!(compared > 20, "the cases hold selectors to compare: {compared}");
    // A namespace of 60 workloads sharing `tier` and `team` labels three and five ways, each spread over
    // a selector of one of four forms, and budgets over each form.
    let selectors = [
        "matchLabels: {tier: t1}",
        "matchLabels: {tier: t2, team: e3}",
        "matchExpressions: [{key: team, operator: In, values: [e1, e2]}]",
        "matchLabels: {tier: t0}\n          matchExpressions: [{key: app, operator: NotIn, values: [w7]}]",
        "{}",
    ];
    let mut text = String::new();
    for i in 0..60 {
        let selector = selectors[i % selectors.len()];
        text.push_str(&format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: w{i}, namespace: big}}\nspec:\n  replicas: 3\n  \
             selector: {{matchLabels: {{app: w{i}}}}}\n  template:\n    metadata:\n      labels: {{app: w{i}, tier: t{}, team: e{}}}\n    \
             spec:\n      containers: [{{name: c, image: i}}]\n      topologySpreadConstraints:\n      - maxSkew: 1\n        \
             topologyKey: kubernetes.io/hostname\n        whenUnsatisfiable: DoNotSchedule\n        labelSelector:\n          {selector}\n---\n",
            i % 3,
            i % 5
        ));
    }
    for (i, selector) in selectors.iter().enumerate() {
        let selector = selector.replace("\n          ", "\n    ");
        text.push_str(&format!(
            "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: b{i}, namespace: big}}\nspec:\n  maxUnavailable: 1\n  \
             selector:\n    {selector}\n---\n"
        ));
    }
    let set = read(&[Input::Text { name: "big.yaml".into(), text }]);
    assert_eq!((set.workloads.len(), set.budgets.len()), (60, 5));
    // 65 selectors; the `{}` and matchExpressions forms fall back to the namespace, the others to a
    // posting list, and between them they select hundreds of other workloads.
    let (compared, selected) = compare(&set);
    assert_eq!(compared, 65);
    assert!(selected > 300, "{selected}");
}
