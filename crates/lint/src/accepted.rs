//! The warnings a lint run accepts (issue 21), set aside as the compiler sets aside what `allow`
//! acknowledges: not printed, counted in the summary as acknowledged. Three sources:
//!
//! * `kix.dev/allow: "K0702,K0714"`, an annotation on an object: those warnings on that object (a
//!   finding is on the object its primary location lies in), for manifests kix did not write, as
//!   kube-linter's `ignore-check.kube-linter.io/<check>` and Polaris' `<check>-exempt` annotations do;
//!   an entry that is not a warning's code is K0730;
//! * with `--cluster`, the cluster file's `allow`: on every object;
//! * with `--cluster`, an instance's `allow`: on the objects of the instance's namespace (the namespace
//!   its objects are applied to), the objects lint can tell are that instance's.
//!
//! Then `--deny-warnings` denies what is left (K0502), through [`Diagnostics::settle`], the policy
//! build, check and verify share.

use super::facts::ClusterFacts;
use kix_compiler::load::documents::Document;
use kix_diag::{Code, Diagnostic, Diagnostics, Severity};
use kix_kube::kix_names::ALLOW_ANNOTATION;
use std::collections::HashMap;
use std::path::Path;

/// One linted object: where it is written and what it accepts. A lint keeps one per object of its
/// inputs (33,450 for a 15 MB stream), so what objects share is shared: the file's path, and the
/// `Kind namespace/` its name starts with (one text per kind and namespace, [`ObjectNames`]).
#[derive(Clone, Debug)]
pub struct Object {
    /// Its file, as diagnostics name it (shared by the file's objects).
    pub file: std::sync::Arc<Path>,
    /// The bytes of the file it is written in.
    pub range: std::ops::Range<usize>,
    /// `Kind namespace/` (`Kind ` without a namespace), shared by the objects of its kind and namespace.
    kind_and_namespace: std::sync::Arc<str>,
    /// The length of `Kind ` in `kind_and_namespace`.
    kind_length: u32,
    /// `metadata.name`.
    name: Box<str>,
    /// The warning codes its `kix.dev/allow` names.
    pub allow: Box<[Code]>,
}

impl Object {
    /// Whether a diagnostic's primary location lies in this object: what [`ByFile`] finds without a scan
    /// (the test's reference).
    #[cfg(test)]
    pub fn holds(&self, diagnostic: &Diagnostic) -> bool {
        diagnostic
            .location()
            .is_some_and(|l| l.path() == &*self.file && l.offset().is_some_and(|offset| self.range.contains(&offset)))
    }

    /// `Kind namespace/name` (`Kind name` without a namespace).
    pub fn name(&self) -> String {
        format!("{}{}", self.kind_and_namespace, self.name)
    }

    /// Whether [`Object::name`] is `written`, without making it.
    pub fn is_named(&self, written: &str) -> bool {
        written.strip_prefix(&*self.kind_and_namespace) == Some(&*self.name)
    }

    /// `metadata.namespace` as written (empty when absent).
    pub fn namespace(&self) -> &str {
        let kind_length = self.kind_length as usize;
        self.kind_and_namespace[kind_length..].strip_suffix('/').unwrap_or_default()
    }
}

/// The `Kind namespace/` texts of a run's objects, each made once: a stream has a few kinds in a few
/// namespaces, and every object's name starts with one of them.
#[derive(Debug, Default)]
pub struct ObjectNames {
    kinds_and_namespaces: HashMap<(Box<str>, Box<str>), std::sync::Arc<str>>,
}

impl ObjectNames {
    fn kind_and_namespace(&mut self, kind: &str, namespace: &str) -> std::sync::Arc<str> {
        let key = (Box::from(kind), Box::from(namespace));
        let made = self.kinds_and_namespaces.entry(key).or_insert_with(|| {
            let place = if namespace.is_empty() { String::new() } else { format!("{namespace}/") };
            format!("{kind} {place}").into()
        });
        std::sync::Arc::clone(made)
    }
}

/// One object with what its annotation accepts, read as its document streams past (the document itself
/// is kept only by what the rules read of it, [`super::set`]), `file` its file's path; K0730 for each entry that is no warning's code.
pub fn object(
    document: &Document,
    file: &std::sync::Arc<Path>,
    names: &mut ObjectNames,
    diagnostics: &mut Diagnostics,
) -> Object {
    let text = |value: Option<&kix_yaml::Value>| value.and_then(|v| v.as_str()).map(str::to_string);
    let metadata = document.value.get("metadata");
    let namespace = text(metadata.and_then(|m| m.get("namespace"))).unwrap_or_default();
    let annotation = text(metadata.and_then(|m| m.get("annotations")).and_then(|a| a.get(ALLOW_ANNOTATION)));
    let mut allow = Vec::new();
    for entry in annotation.iter().flat_map(|a| a.split(',')).map(str::trim).filter(|e| !e.is_empty()) {
        match Code::ALL.iter().find(|c| c.id().eq_ignore_ascii_case(entry)) {
            Some(code) if code.severity() == Severity::Warning => allow.push(*code),
            found => {
                let why = match found {
                    Some(code) => {
                        format!("`{}` is an error ({}); errors cannot be accepted", code.id(), code.summary())
                    }
                    None => format!("`{entry}` is not a diagnostic code"),
                };
                let at = document.locate(&["metadata", "annotations", ALLOW_ANNOTATION]);
                diagnostics.push(
                    Diagnostic::new(Code::LintAllowNotAWarning, format!("{ALLOW_ANNOTATION}: {why}"))
                        .at(at)
                        .help("`kix explain` lists every code with its severity"),
                );
            }
        }
    }
    let kind = document.kind();
    Object {
        file: std::sync::Arc::clone(file),
        range: document.byte_range(),
        kind_and_namespace: names.kind_and_namespace(kind, &namespace),
        kind_length: u32::try_from(kind.len() + 1).expect("a kind is a short name"),
        name: document.name().into(),
        allow: allow.into(),
    }
}

/// Sets aside the warnings the objects and the cluster accept, sorts, and under `deny_warnings` denies the rest.
pub fn settle(objects: &[Object], facts: Option<&ClusterFacts>, deny_warnings: bool, diagnostics: &mut Diagnostics) {
    let by_file = ByFile::new(objects);
    let accepted = |d: &Diagnostic| {
        let object = by_file.holding(d);
        let by_cluster = facts.is_some_and(|facts| {
            facts.allow.contains(&d.code)
                || object.is_some_and(|o| {
                    facts
                        .instance_allow
                        .iter()
                        .any(|(namespace, allow)| **namespace == *o.namespace() && allow.contains(&d.code))
                })
        });
        by_cluster || object.is_some_and(|o| o.allow.contains(&d.code))
    };
    diagnostics.settle(accepted, deny_warnings);
}

/// The objects by file, each file's in the order they start: the object a finding lies in is found
/// without comparing its path with every object's (a lint of 2,000 files has some 80,000 objects and
/// tens of thousands of warnings; that comparison was nearly all of its time).
pub struct ByFile<'a> {
    objects: &'a [Object],
    /// Per file, indices into `objects` sorted by where they start, and whether their ranges are
    /// disjoint (the documents of a stream are; then at most one holds an offset).
    files: HashMap<&'a Path, (Vec<usize>, bool)>,
}

impl<'a> ByFile<'a> {
    pub fn new(objects: &'a [Object]) -> ByFile<'a> {
        let mut files: HashMap<&Path, (Vec<usize>, bool)> = HashMap::new();
        for (index, object) in objects.iter().enumerate() {
            files.entry(&*object.file).or_default().0.push(index);
        }
        for (indices, disjoint) in files.values_mut() {
            indices.sort_by_key(|&i| (objects[i].range.start, i));
            *disjoint = indices.windows(2).all(|w| objects[w[0]].range.end <= objects[w[1]].range.start);
        }
        ByFile { objects, files }
    }

    /// The first object (in input order) holding the diagnostic's primary location, as
    /// `objects.iter().find(|o| o.holds(d))` finds it.
    fn holding(&self, diagnostic: &Diagnostic) -> Option<&'a Object> {
        self.index_holding(diagnostic).map(|i| &self.objects[i])
    }

    /// The index of [`ByFile::holding`]'s object in `objects`.
    pub fn index_holding(&self, diagnostic: &Diagnostic) -> Option<usize> {
        let location = diagnostic.location()?;
        let offset = location.offset()?;
        let (indices, disjoint) = self.files.get(location.path())?;
        let holds = |&i: &usize| self.objects[i].range.contains(&offset);
        if *disjoint {
            let starting = indices.partition_point(|&i| self.objects[i].range.start <= offset);
            indices[..starting].last().copied().filter(|i| holds(i))
        } else {
            indices.iter().copied().filter(|i| holds(i)).min()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kix_diag::SourceFile;

    fn object(file: &str, range: std::ops::Range<usize>) -> Object {
        let (kind_and_namespace, kind_length, name) = ("".into(), 0, "".into());
        Object { file: Path::new(file).into(), range, kind_and_namespace, kind_length, name, allow: Box::new([]) }
    }

    /// The index finds what a scan of every object finds: the first object in input order whose file is the
    /// finding's and whose bytes hold its offset, with disjoint ranges (a stream) and overlapping ones.
    #[test]
    fn the_index_finds_the_object_a_scan_finds() {
        let text = "x".repeat(40);
        let objects = vec![
            object("b.yaml", 10..20),
            object("a.yaml", 0..10),
            object("a.yaml", 20..30),
            object("a.yaml", 10..20),
            object("c.yaml", 0..30),
            object("c.yaml", 5..15),
            object("c.yaml", 12..13),
        ];
        let by_file = ByFile::new(&objects);
        for file in ["a.yaml", "b.yaml", "c.yaml", "d.yaml"] {
            let source = SourceFile::new(file, text.clone());
            for offset in 0..40 {
                let diagnostic = Diagnostic::new(Code::LintAllowNotAWarning, "x").at(source.locate(offset..offset + 1));
                let scanned = objects.iter().position(|o| o.holds(&diagnostic));
                let indexed = by_file.holding(&diagnostic).map(std::ptr::from_ref);
                assert_eq!(indexed, scanned.map(|i| std::ptr::from_ref(&objects[i])), "{file} at {offset}");
            }
        }
    }

    /// An object's name, namespace and accepted codes read from its document, as they were when each
    /// object held its own `Kind namespace/name` and namespace: with and without a namespace, the
    /// `Kind namespace/` text shared by the objects of one kind and namespace.
    #[test]
    fn an_object_is_named_as_written() {
        let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop, annotations: {kix.dev/allow: K0706}}\n---\n\
                    apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\n---\n\
                    apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api, namespace: shop}\n---\n\
                    apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader}\n";
        let mut problems = Diagnostics::default();
        let documents =
            kix_compiler::load::documents::parse_documents(SourceFile::new("m.yaml", text.into()), &mut problems);
        let file: std::sync::Arc<Path> = Path::new("m.yaml").into();
        let mut names = ObjectNames::default();
        let objects: Vec<Object> =
            documents.iter().map(|d| super::object(d, &file, &mut names, &mut problems)).collect();
        assert!(problems.is_empty(), "{:?}", problems.iter().map(|d| d.message.to_string()).collect::<Vec<_>>());
        let named: Vec<(String, &str)> = objects.iter().map(|o| (o.name(), o.namespace())).collect();
        assert_eq!(
            named,
            [
                ("Deployment shop/web".to_string(), "shop"),
                ("Service shop/web".to_string(), "shop"),
                ("Deployment shop/api".to_string(), "shop"),
                ("ClusterRole reader".to_string(), "")
            ]
        );
        assert_eq!(&*objects[0].allow, &[Code::LintHardSpreadWithoutHash]);
        assert!(objects[0].is_named("Deployment shop/web") && !objects[1].is_named("Deployment shop/web"));
        assert!(!objects[0].is_named("Deployment shop/") && !objects[3].is_named("ClusterRole reader2"));
        assert!(std::sync::Arc::ptr_eq(&objects[0].kind_and_namespace, &objects[2].kind_and_namespace));
        assert_eq!(objects[0].range, documents[0].byte_range());
    }
}
