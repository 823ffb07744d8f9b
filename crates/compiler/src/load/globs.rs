//! Which files of a package directory are its resources.
//!
//! Without `resources` in kix.toml: every `*.yaml`/`*.yml` file directly in the directory, in
//! name order. With `resources = ["deploy.yaml", "crds/*.yaml"]`: the files the patterns match,
//! in the order of the list and, within one pattern, in path order; a file matched twice is read
//! once. Patterns are relative paths with `/` between parts: `*` matches any characters of one
//! name, `?` one character, and a part that is exactly `**` any number of directories (zero
//! included). As in a shell, a wildcard never matches a name's leading `.`, so hidden files and
//! directories are read only when named. `.` parts are ignored; `..`, absolute paths, backslashes
//! and other glob syntax (`[...]`, `{...}`) are refused (K0110), so no pattern leaves the
//! directory. A pattern that matches no file is an error at the pattern (K0111). Symlinks are
//! judged as everywhere in a package ([`super::package::escape`]): one that leaves the directory
//! is refused (K0108), wherever a pattern meets it.
//!
//! kix's own matcher (some 100 lines) rather than a crate: the syntax is small and fixed, and the
//! walk has to stop at escaping symlinks and symlink cycles, which a path matcher alone does not.

use crate::fs::Reader;
use crate::fs::package_escape;
use kix_diag::{Code, Diagnostic, Diagnostics, Location, SourceFile};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use toml::Spanned;

/// One part of a pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    /// `**`: any number of directories.
    AnyDirs,
    /// A name, possibly with `*` and `?`.
    Name(String),
}

/// Splits a pattern into parts, or says why it is refused.
fn parse(pattern: &str) -> Result<Vec<Part>, String> {
    if pattern.is_empty() {
        return Err("the pattern is empty".into());
    }
    if pattern.starts_with('/') {
        return Err("the pattern is an absolute path; resources are relative to the package directory".into());
    }
    if let Some(c) = pattern.chars().find(|c| matches!(c, '\\' | '[' | ']' | '{' | '}')) {
        return Err(format!("`{c}` is not supported; patterns use `*`, `?` and `**` only, with `/` between parts"));
    }
    let mut parts = Vec::new();
    for part in pattern.split('/').filter(|p| !p.is_empty() && *p != ".") {
        match part {
            ".." => return Err("`..` would leave the package directory".into()),
            "**" => parts.push(Part::AnyDirs),
            _ if part.contains("**") => return Err("`**` must be a whole path part, as in `crds/**/*.yaml`".into()),
            _ => parts.push(Part::Name(part.to_string())),
        }
    }
    if parts.is_empty() {
        return Err("the pattern names the package directory itself, not a file".into());
    }
    Ok(parts)
}

/// Whether a name matches a pattern of one part (`*` any characters, `?` one); a wildcard never
/// matches a leading `.`.
fn matches(pattern: &str, name: &str) -> bool {
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    let (pattern, name): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // Iterative wildcard matching with one backtrack point (the last `*`).
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
            }
            Some('?') => (p, n) = (p + 1, n + 1),
            Some(c) if *c == name[n] => (p, n) = (p + 1, n + 1),
            _ => match star {
                Some((sp, sn)) => {
                    (p, n) = (sp + 1, sn + 1);
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

/// What walking one pattern found.
#[derive(Default)]
struct Walk {
    /// Matched files, relative to the package directory (path order).
    files: BTreeSet<PathBuf>,
    /// Matched paths refused for safety, with why.
    refused: BTreeMap<PathBuf, String>,
    /// Whether the pattern matched a directory (a hint when it matched no file).
    saw_dir: bool,
    /// Directories a `**` entered, by canonical path and the parts left (a symlink cycle is
    /// entered once).
    entered: BTreeSet<(PathBuf, usize)>,
}

struct Package<'a> {
    dir: &'a Path,
    canonical: &'a Path,
}

impl Package<'_> {
    /// Sorted entries of a directory (relative paths); an unreadable directory has none here
    /// (the package directory itself was listed already).
    fn entries(&self, rel: &Path) -> Vec<PathBuf> {
        let Ok(read) = std::fs::read_dir(self.dir.join(rel)) else { return Vec::new() };
        let mut entries: Vec<PathBuf> = read.filter_map(Result::ok).map(|e| rel.join(e.file_name())).collect();
        entries.sort();
        entries
    }

    /// A directory a pattern may descend into: a real one, or a symlink that stays inside.
    /// A symlink is judged before it is followed, so a dangling or escaping one is refused even
    /// where it stands for a directory.
    fn enterable(&self, rel: &Path, walk: &mut Walk) -> bool {
        let path = self.dir.join(rel);
        let is_symlink = crate::fs::is_symlink(&path);
        if is_symlink && let Some(why) = package_escape(&path, self.canonical) {
            walk.refused.insert(rel.to_path_buf(), why);
            return false;
        }
        path.is_dir()
    }

    fn candidate(&self, rel: &Path, walk: &mut Walk) {
        if rel == Path::new("kix.toml") {
            return;
        }
        let path = self.dir.join(rel);
        if let Some(why) = package_escape(&path, self.canonical) {
            walk.refused.insert(rel.to_path_buf(), why);
        } else if path.is_dir() {
            walk.saw_dir = true;
        } else if std::fs::symlink_metadata(&path).is_ok() {
            // A regular file, or a FIFO, socket or device: reading refuses the latter, never skips it.
            walk.files.insert(rel.to_path_buf());
        }
    }

    fn walk(&self, rel: &Path, parts: &[Part], walk: &mut Walk) {
        let Some((part, rest)) = parts.split_first() else { return };
        match part {
            Part::Name(name) if !name.contains(['*', '?']) => {
                // A literal: no listing, so hidden names can be named.
                let next = rel.join(name);
                if std::fs::symlink_metadata(self.dir.join(&next)).is_err() {
                    return;
                }
                self.step(&next, rest, walk);
            }
            Part::Name(name) => {
                for next in self.entries(rel) {
                    // A wildcard passes over what it cannot enter; a name written out is judged.
                    let usable = rest.is_empty() || self.dir.join(&next).is_dir();
                    if usable && next.file_name().and_then(|n| n.to_str()).is_some_and(|n| matches(name, n)) {
                        self.step(&next, rest, walk);
                    }
                }
            }
            Part::AnyDirs => {
                let canonical = self.dir.join(rel).canonicalize().unwrap_or_default();
                if !walk.entered.insert((canonical, parts.len())) {
                    return;
                }
                // Zero directories, then one more under every (non-hidden) directory.
                if rest.is_empty() {
                    for next in self.entries(rel) {
                        if !self.dir.join(&next).is_dir() && !hidden(&next) {
                            self.candidate(&next, walk);
                        }
                    }
                } else {
                    self.walk(rel, rest, walk);
                }
                for next in self.entries(rel) {
                    if !hidden(&next) && self.dir.join(&next).is_dir() && self.enterable(&next, walk) {
                        self.walk(&next, parts, walk);
                    }
                }
            }
        }
    }

    /// After matching one part at `next`: a file when the pattern ends, else a directory to enter.
    fn step(&self, next: &Path, rest: &[Part], walk: &mut Walk) {
        if rest.is_empty() {
            self.candidate(next, walk);
        } else if self.enterable(next, walk) {
            self.walk(next, rest, walk);
        }
    }
}

fn hidden(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('.'))
}

/// The files `resources = [...]` names, in order; each problem reported (K0110, K0111, K0108).
pub fn listed(
    reader: &Reader<'_>,
    dir: &Path,
    canonical_dir: &Path,
    manifest: &SourceFile,
    patterns: &[Spanned<String>],
    diagnostics: &mut Diagnostics,
) -> Vec<PathBuf> {
    let package = Package { dir, canonical: canonical_dir };
    let mut files = Vec::new();
    let mut seen = BTreeSet::new();
    let mut refused = BTreeSet::new();
    for pattern in patterns {
        let at = manifest.locate(pattern.span());
        let parts = match parse(pattern.get_ref()) {
            Ok(parts) => parts,
            Err(why) => {
                diagnostics.push(
                    Diagnostic::new(
                        Code::InvalidResourcePattern,
                        format!("resources pattern `{}` is refused: {why}", pattern.get_ref()),
                    )
                    .at(at),
                );
                continue;
            }
        };
        let mut walk = Walk::default();
        package.walk(Path::new(""), &parts, &mut walk);
        for (rel, why) in &walk.refused {
            if refused.insert(rel.clone()) {
                diagnostics.push(
                    Diagnostic::new(Code::InputRefused, why.clone()).at(Location::file(reader.display(&dir.join(rel)))),
                );
            }
        }
        if walk.files.is_empty() && walk.refused.is_empty() {
            let mut diagnostic = Diagnostic::new(
                Code::ResourcePatternMatchesNothing,
                format!(
                    "resources pattern `{}` matches no file of {}",
                    pattern.get_ref(),
                    reader.display(dir).display()
                ),
            )
            .at(at);
            if walk.saw_dir {
                diagnostic = diagnostic.help(format!(
                    "it names a directory; name its files, as in `{}/*.yaml`",
                    pattern.get_ref().trim_end_matches('/')
                ));
            }
            diagnostics.push(diagnostic);
        }
        for rel in walk.files {
            if seen.insert(rel.clone()) {
                files.push(dir.join(rel));
            }
        }
    }
    files
}

/// Without `resources`: every `*.yaml`/`*.yml` file directly in the directory, and a kustomization
/// file named `Kustomization` (checked, never read as a resource); escaping symlinks refused.
pub fn default_files(
    reader: &Reader<'_>,
    entries: &[PathBuf],
    canonical_dir: &Path,
    diagnostics: &mut Diagnostics,
) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for path in entries {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if !(name.ends_with(".yaml") || name.ends_with(".yml") || name == "Kustomization") {
            continue;
        }
        if let Some(why) = package_escape(path, canonical_dir) {
            diagnostics.push(Diagnostic::new(Code::InputRefused, why).at(Location::file(reader.display(path))));
            continue;
        }
        // Anything else so named is a resource too: reading refuses one that is not a regular file.
        files.push(path.clone());
    }
    report_unread_subdirectories(reader, entries, diagnostics);
    files
}

/// Without `resources`, a package is the YAML files at its top level: YAML in a subdirectory is not read.
/// Upstream packages often keep CRDs or autoscalers in one (`crds/`, `hpa/`), so say so (K0113) rather than
/// drop them silently.
fn report_unread_subdirectories(reader: &Reader<'_>, entries: &[PathBuf], diagnostics: &mut Diagnostics) {
    fn yaml_files(dir: &Path, depth: usize) -> usize {
        if depth > 8 {
            return 0;
        }
        let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
        entries
            .flatten()
            .map(|entry| {
                let path = entry.path();
                let hidden = entry.file_name().to_string_lossy().starts_with('.');
                let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
                if hidden || is_link {
                    0
                } else if path.is_dir() {
                    yaml_files(&path, depth + 1)
                } else {
                    usize::from(path.extension().is_some_and(|e| e == "yaml" || e == "yml"))
                }
            })
            .sum()
    }
    for dir in entries {
        let hidden = dir.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'));
        let is_link = crate::fs::is_symlink(dir);
        if hidden || is_link || !dir.is_dir() {
            continue;
        }
        let count = yaml_files(dir, 0);
        if count == 0 {
            continue;
        }
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        diagnostics.push(
            Diagnostic::new(
                Code::UnreadSubdirectory,
                format!(
                    "{name}/ holds {count} YAML file{} that kix does not read: without `resources`, a package is \
                     the YAML files at its top level",
                    kix_diag::words::s(count)
                ),
            )
            .at(Location::file(reader.display(dir)))
            .help(format!("list them in kix.toml, e.g. resources = [\"*.yaml\", \"{name}/**/*.yaml\"]")),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_stars_and_question_marks() {
        let cases = [
            ("*.yaml", "deploy.yaml", true),
            ("*.yaml", "deploy.yml", false),
            ("*.y*ml", "deploy.yml", true),
            ("d?ploy.yaml", "deploy.yaml", true),
            ("d?ploy.yaml", "dploy.yaml", false),
            ("*", "a", true),
            ("*", "", true),
            ("a*b*c", "aXXbYYc", true),
            ("a*b*c", "aXXbYY", false),
            ("*a", "banana", true),
            ("*.yaml", ".hidden.yaml", false),
            (".*.yaml", ".hidden.yaml", true),
            ("??", "ab", true),
            ("??", "abc", false),
            ("é*", "été", true),
        ];
        for (pattern, name, expected) in cases {
            assert_eq!(matches(pattern, name), expected, "{pattern} ~ {name}");
        }
    }

    #[test]
    fn patterns_are_relative_and_stay_inside() {
        assert_eq!(
            parse("./crds/**/*.yaml"),
            Ok(vec![Part::Name("crds".into()), Part::AnyDirs, Part::Name("*.yaml".into())])
        );
        let refused = [
            ("", "empty"),
            ("/etc/passwd", "absolute"),
            ("../other/a.yaml", "`..`"),
            ("crds/../../a.yaml", "`..`"),
            ("crds/[ab].yaml", "`[` is not supported"),
            ("{a,b}.yaml", "`{` is not supported"),
            ("crds\\a.yaml", "`\\` is not supported"),
            ("crds/a**.yaml", "whole path part"),
            ("./", "package directory itself"),
        ];
        for (pattern, says) in refused {
            let why = parse(pattern).unwrap_err();
            assert!(why.contains(says), "{pattern}: {why}");
        }
    }

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in files {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        dir
    }

    fn expand(dir: &Path, patterns: &[&str]) -> (Vec<String>, Vec<Code>) {
        let text: String =
            format!("resources = [{}]\n", patterns.iter().map(|p| format!("{p:?}")).collect::<Vec<_>>().join(", "));
        #[derive(serde::Deserialize)]
        struct Raw {
            resources: Vec<Spanned<String>>,
        }
        let raw: Raw = toml::from_str(&text).unwrap();
        let manifest = SourceFile::new("kix.toml", text);
        let mut diagnostics = Diagnostics::default();
        let reader = Reader::new(dir);
        let canonical = dir.canonicalize().unwrap();
        let files = listed(&reader, dir, &canonical, &manifest, &raw.resources, &mut diagnostics);
        let names = files.iter().map(|f| f.strip_prefix(dir).unwrap().display().to_string()).collect();
        (names, diagnostics.iter().map(|d| d.code).collect())
    }

    #[test]
    fn files_come_in_list_order_then_path_order_once() {
        let dir = tree(&[
            "kix.toml",
            "deploy.yaml",
            "crds/b.yaml",
            "crds/a.yaml",
            "crds/notes.md",
            "crds/deep/c.yaml",
            "crds/.hidden/d.yaml",
            ".e.yaml",
        ]);
        let cases: &[(&[&str], &[&str])] = &[
            (&["deploy.yaml", "crds/*.yaml"], &["deploy.yaml", "crds/a.yaml", "crds/b.yaml"]),
            (&["crds/*.yaml", "deploy.yaml", "crds/a.yaml"], &["crds/a.yaml", "crds/b.yaml", "deploy.yaml"]),
            (&["**/*.yaml"], &["crds/a.yaml", "crds/b.yaml", "crds/deep/c.yaml", "deploy.yaml"]),
            (&["crds/**"], &["crds/a.yaml", "crds/b.yaml", "crds/deep/c.yaml", "crds/notes.md"]),
            (&["*"], &["deploy.yaml"]),
            (&[".e.yaml", "crds/.hidden/d.yaml"], &[".e.yaml", "crds/.hidden/d.yaml"]),
        ];
        for (patterns, expected) in cases {
            let (files, codes) = expand(dir.path(), patterns);
            assert!(codes.is_empty(), "{patterns:?}: {codes:?}");
            assert_eq!(files, *expected, "{patterns:?}");
        }
    }

    #[test]
    fn patterns_matching_nothing_or_refused_are_errors() {
        let dir = tree(&["kix.toml", "crds/a.yaml"]);
        let cases: &[(&[&str], &[Code])] = &[
            (&["missing.yaml"], &[Code::ResourcePatternMatchesNothing]),
            (&["crds"], &[Code::ResourcePatternMatchesNothing]),
            (&["kix.toml"], &[Code::ResourcePatternMatchesNothing]),
            (&["crds/*.yml", "../x.yaml"], &[Code::ResourcePatternMatchesNothing, Code::InvalidResourcePattern]),
        ];
        for (patterns, expected) in cases {
            let (_, codes) = expand(dir.path(), patterns);
            assert_eq!(codes, *expected, "{patterns:?}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_out_are_refused_and_cycles_walked_once() {
        let outside = tree(&["secret.yaml"]);
        let dir = tree(&["kix.toml", "a/b.yaml"]);
        std::os::unix::fs::symlink(dir.path().join("a"), dir.path().join("a/loop")).unwrap();
        let (files, codes) = expand(dir.path(), &["**/*.yaml"]);
        assert_eq!(files, ["a/b.yaml"]);
        assert!(codes.is_empty(), "{codes:?}");
        // A dangling link that no pattern names is passed over by wildcards.
        std::os::unix::fs::symlink(dir.path().join("missing"), dir.path().join("a/gone")).unwrap();
        let (files, codes) = expand(dir.path(), &["**/*.yaml", "*/*.yaml"]);
        assert_eq!((files, codes), (vec!["a/b.yaml".to_string()], vec![]));
        let (_, codes) = expand(dir.path(), &["a/gone/*.yaml"]);
        assert_eq!(codes, [Code::InputRefused], "a dangling link named in a pattern is refused");
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        let (_, codes) = expand(dir.path(), &["out/*.yaml"]);
        assert_eq!(codes, [Code::InputRefused]);
        let (files, codes) = expand(dir.path(), &["**/*.yaml"]);
        assert_eq!((files, codes), (vec!["a/b.yaml".to_string()], vec![Code::InputRefused]));
    }
}
