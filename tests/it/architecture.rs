//! What Cargo cannot enforce about kix's structure, checked: no two files of one crate import
//! each other in a circle, and no source file is over 700 lines.
//!
//! Which crate may use which is Cargo's business (each crate's `Cargo.toml` names the crates it
//! depends on, and rustc refuses any other). Inside a crate, rustc allows files to import each other
//! freely, so a circle (model types and their reader in one file, each needing the other) goes
//! unnoticed: this test reads every `.rs` file of the workspace, resolves each `use` and each
//! `crate::`, `super::` and `self::` path to the file that defines the module it names, and reports
//! every strongly connected set of files. Inline modules (`mod tests { use super::*; }`) are
//! tracked, so `super` means what rustc means by it; a `mod child;` declaration and a module
//! root's `pub use child::Item` re-export are the module's shape, not an import. Test-only code
//! (an item under `#[cfg(test)]`, and the files of a `#[cfg(test)] mod x;`) may reach anywhere in
//! its crate and is left out; the attribute is read as rustc reads it, on the item it precedes.

use crate::support::repo_path;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace's crates: the root package and every crate under crates/.
fn crate_roots() -> Vec<PathBuf> {
    let mut roots = vec![repo_path("src")];
    let mut members: Vec<PathBuf> =
        std::fs::read_dir(repo_path("crates")).unwrap().map(|e| e.unwrap().path().join("src")).collect();
    members.sort();
    roots.extend(members);
    roots
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The module path a file defines: `lib.rs` and `main.rs` are the root, `a/mod.rs` and `a.rs` are
/// `a`, `a/b.rs` is `a::b`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap();
    let stem = last.strip_suffix(".rs").unwrap();
    if !(parts.is_empty() && (stem == "lib" || stem == "main")) && stem != "mod" {
        parts.push(stem.to_string());
    }
    parts
}

/// Rust source reduced to tokens: comments and string and char literals removed, identifiers,
/// `::` and single punctuation characters kept.
fn tokens(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || (next == Some('#') && raw_string_start(&chars, i + 1))) {
            // Raw string r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars[j] == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
        } else if c == '\'' {
            // A char literal ('a', '\n', '\u{1F600}') or a lifetime ('a): a lifetime has no closing quote.
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else if c == ':' && next == Some(':') {
            out.push("::".to_string());
            i += 2;
        } else if c.is_whitespace() || c.is_ascii_digit() {
            i += 1;
        } else {
            out.push(c.to_string());
            i += 1;
        }
    }
    out
}

fn raw_string_start(chars: &[char], mut at: usize) -> bool {
    while chars.get(at) == Some(&'#') {
        at += 1;
    }
    chars.get(at) == Some(&'"')
}

/// Expands one `use` tree (the tokens between `use` and `;`) into its paths.
fn expand_use(tokens: &[String]) -> Vec<Vec<String>> {
    fn tree(tokens: &[String], at: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
        let mut path = prefix.to_vec();
        while *at < tokens.len() {
            match tokens[*at].as_str() {
                "{" => {
                    *at += 1;
                    loop {
                        tree(tokens, at, &path, out);
                        match tokens.get(*at).map(String::as_str) {
                            Some(",") => *at += 1,
                            Some("}") => {
                                *at += 1;
                                break;
                            }
                            _ => break,
                        }
                        if tokens.get(*at).map(String::as_str) == Some("}") {
                            *at += 1;
                            break;
                        }
                    }
                    return;
                }
                "," | "}" => break,
                "::" => *at += 1,
                "as" => {
                    *at += 2;
                    break;
                }
                "*" => {
                    *at += 1;
                    break;
                }
                "self" if !path.is_empty() => *at += 1,
                segment => {
                    path.push(segment.to_string());
                    *at += 1;
                }
            }
        }
        out.push(path);
    }
    let mut out = Vec::new();
    let mut at = 0;
    while at < tokens.len() {
        let before = at;
        tree(tokens, &mut at, &[], &mut out);
        if at == before {
            at += 1;
        }
    }
    out
}

/// One file's references: the paths it names, each with the module it was named in (inline modules
/// included), the modules it declares inline, and the test-only modules it declares
/// (`#[cfg(test)] mod x;`), whose files are left out of the graph.
struct FileRefs {
    paths: Vec<(Vec<String>, Vec<String>)>,
    inline_modules: Vec<Vec<String>>,
    test_modules: Vec<Vec<String>>,
    /// A module root's `pub use` items, each with the module it is written in: a path naming the
    /// re-exported item is followed to the file that defines it.
    reexports: Vec<(Vec<String>, Vec<String>)>,
}

/// Where the attribute at `tokens[at..]` ends when it is `#[cfg(test)]` or `#[cfg(all(test, ...))]`
/// (compiled only for tests, whatever else it requires); `None` for any other token or attribute
/// (`#[cfg(any(test, feature = "testing"))]` is compiled outside tests too).
fn cfg_test_end(tokens: &[String], at: usize) -> Option<usize> {
    let starts = |want: &[&str]| {
        tokens.len() >= at + want.len() && tokens[at..at + want.len()].iter().zip(want).all(|(t, w)| t == w)
    };
    if !(starts(&["#", "[", "cfg", "(", "test", ")", "]"]) || starts(&["#", "[", "cfg", "(", "all", "(", "test", ","]))
    {
        return None;
    }
    tokens[at..].iter().position(|t| t == "]").map(|p| at + p + 1)
}

fn references(module: &[String], text: &str) -> FileRefs {
    let tokens = tokens(text);
    let mut refs =
        FileRefs { paths: Vec::new(), inline_modules: Vec::new(), test_modules: Vec::new(), reexports: Vec::new() };
    // The stack of inline modules: (module path, brace depth at which it closes).
    let mut scope: Vec<(Vec<String>, usize)> = vec![(module.to_vec(), 0)];
    let mut depth = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        let current = scope.last().unwrap().0.clone();
        let token = tokens[i].as_str();
        if let Some(end) = cfg_test_end(&tokens, i) {
            // Test-only code may reach anywhere in its crate: skip the item the attribute is on.
            let mut j = end;
            while tokens.get(j).map(String::as_str) == Some("#") {
                j = tokens[j..].iter().position(|t| t == "]").map_or(tokens.len(), |p| j + p + 1);
            }
            if tokens.get(j).map(String::as_str) == Some("pub") {
                j += 1;
            }
            if tokens.get(j).map(String::as_str) == Some("mod") && tokens.get(j + 2).map(String::as_str) == Some(";") {
                let mut test_module = current.clone();
                test_module.push(tokens[j + 1].clone());
                refs.test_modules.push(test_module);
                i = j + 3;
                continue;
            }
            // Any other item: skip to the end of its block (or its `;` when it has none).
            let mut k = j;
            while k < tokens.len() && tokens[k] != "{" && tokens[k] != ";" {
                k += 1;
            }
            if tokens.get(k).map(String::as_str) == Some("{") {
                let mut level = 0;
                while k < tokens.len() {
                    match tokens[k].as_str() {
                        "{" => level += 1,
                        "}" => {
                            level -= 1;
                            if level == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    k += 1;
                }
            }
            i = k + 1;
            continue;
        }
        match token {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if scope.len() > 1 && scope.last().unwrap().1 == depth {
                    scope.pop();
                }
            }
            "mod" if tokens.get(i + 2).map(String::as_str) == Some("{") => {
                let mut inner = current.clone();
                inner.push(tokens[i + 1].clone());
                refs.inline_modules.push(inner.clone());
                scope.push((inner, depth));
                depth += 1;
                i += 3;
                continue;
            }
            "use" => {
                let is_reexport = i > 0 && tokens[i - 1] == "pub";
                let end = tokens[i..].iter().position(|t| t == ";").map_or(tokens.len(), |p| i + p);
                for path in expand_use(&tokens[i + 1..end]) {
                    if is_reexport && scope.len() == 1 {
                        refs.reexports.push((current.clone(), path));
                    } else {
                        refs.paths.push((current.clone(), path));
                    }
                }
                i = end + 1;
                continue;
            }
            "crate" | "super" | "self" if tokens.get(i + 1).map(String::as_str) == Some("::") => {
                let previous = if i > 0 { tokens[i - 1].as_str() } else { "" };
                // `pub(in crate::a)` and `$crate` are visibility and macro syntax, not paths (`pub(crate)`
                // and `pub(super)` have no `::` after them). A path right after `(` is a path: `f(crate::a::g())`.
                if previous != "in" && previous != "$" && previous != "::" {
                    let mut path = vec![token.to_string()];
                    let mut j = i + 1;
                    while tokens.get(j).map(String::as_str) == Some("::")
                        && tokens
                            .get(j + 1)
                            .is_some_and(|t| t.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_'))
                    {
                        path.push(tokens[j + 1].clone());
                        j += 2;
                    }
                    refs.paths.push((current.clone(), path));
                    i = j;
                    continue;
                }
            }
            // A path starting with a bare name (`journal::Journal::new()`, `affinity::check(..)`):
            // kept when the name is a child module of the module it is written in (see
            // `absolute_path`); `std::`, other crates and types (`Vec::new`) resolve to nothing.
            name if tokens.get(i + 1).map(String::as_str) == Some("::")
                && (i == 0 || tokens[i - 1] != "::")
                && name.chars().next().is_some_and(|c| c.is_ascii_lowercase()) =>
            {
                refs.paths.push((current.clone(), vec![name.to_string()]));
            }
            _ => {}
        }
        i += 1;
    }
    refs
}

/// The import graph of one crate: file -> the files it imports.
fn file_graph(src: &Path) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let files = rust_files(src);
    let mut module_file: BTreeMap<Vec<String>, PathBuf> = BTreeMap::new();
    for file in &files {
        module_file.insert(module_of(src, file), file.clone());
    }
    let texts: BTreeMap<&PathBuf, String> = files.iter().map(|f| (f, std::fs::read_to_string(f).unwrap())).collect();
    let all_refs: BTreeMap<&PathBuf, FileRefs> =
        files.iter().map(|f| (f, references(&module_of(src, f), &texts[f]))).collect();
    for (file, refs) in &all_refs {
        for inline in &refs.inline_modules {
            module_file.entry(inline.clone()).or_insert_with(|| (*file).clone());
        }
    }
    // Files of test-only modules, and every file below them.
    let test_only: BTreeSet<&PathBuf> = all_refs
        .values()
        .flat_map(|refs| &refs.test_modules)
        .flat_map(|test| module_file.iter().filter(move |(m, _)| m.starts_with(test)).map(|(_, f)| f))
        .collect();
    // `pub use a::B;` in module `m`: the path `m::B` stands for `m::a::B`.
    let mut reexported: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    for refs in all_refs.values() {
        for (within, path) in &refs.reexports {
            if let Some(target) = absolute_path(within, path, &module_file)
                && let Some(name) = target.last()
            {
                let mut key = within.clone();
                key.push(name.clone());
                if key != target {
                    reexported.insert(key, target);
                }
            }
        }
    }
    let mut graph: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (file, refs) in all_refs.iter().filter(|(f, _)| !test_only.contains(**f)) {
        let targets = graph.entry((*file).clone()).or_default();
        for (within, path) in &refs.paths {
            let Some(mut absolute) = absolute_path(within, path, &module_file) else { continue };
            // Follow re-exports (a bounded number of hops: a re-export of a re-export).
            for _ in 0..8 {
                let Some(n) = (1..=absolute.len()).rev().find(|n| reexported.contains_key(&absolute[..*n])) else {
                    break;
                };
                let mut followed = reexported[&absolute[..n]].clone();
                followed.extend(absolute[n..].iter().cloned());
                absolute = followed;
            }
            // The longest prefix of the path that is a module names the file that defines it.
            let target = (0..=absolute.len()).rev().find_map(|n| module_file.get(&absolute[..n]));
            if let Some(target) = target
                && target != *file
                && !test_only.contains(target)
            {
                targets.insert(target.clone());
            }
        }
    }
    graph
}

/// A path as written in module `within`, made absolute within its crate; `None` for paths into
/// other crates or the standard library.
fn absolute_path(within: &[String], path: &[String], modules: &BTreeMap<Vec<String>, PathBuf>) -> Option<Vec<String>> {
    let first = path.first()?;
    let mut base: Vec<String> = match first.as_str() {
        "crate" => Vec::new(),
        "self" => within.to_vec(),
        "super" => {
            let mut base = within.to_vec();
            let mut rest = path;
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
            base.extend(rest.iter().cloned());
            return Some(base);
        }
        // A child module named by its bare name (`use journal::Journal;` in cluster.rs).
        name => {
            let mut child = within.to_vec();
            child.push(name.to_string());
            if modules.contains_key(&child) {
                within.to_vec()
            } else {
                return None;
            }
        }
    };
    let skip = usize::from(matches!(first.as_str(), "crate" | "self"));
    base.extend(path[skip..].iter().cloned());
    Some(base)
}

/// The strongly connected sets of more than one file (Tarjan's algorithm).
fn circles(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct Tarjan<'a> {
        graph: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on_stack: BTreeSet<&'a PathBuf>,
        found: Vec<Vec<PathBuf>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, node: &'a PathBuf) {
            let n = self.index.len();
            self.index.insert(node, n);
            self.low.insert(node, n);
            self.stack.push(node);
            self.on_stack.insert(node);
            for next in self.graph.get(node).into_iter().flatten() {
                let Some((next, _)) = self.graph.get_key_value(next) else { continue };
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node, low);
                } else if self.on_stack.contains(next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut set = Vec::new();
                while let Some(member) = self.stack.pop() {
                    self.on_stack.remove(member);
                    set.push(member.clone());
                    if member == node {
                        break;
                    }
                }
                if set.len() > 1 {
                    set.sort();
                    self.found.push(set);
                }
            }
        }
    }
    let mut tarjan = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !tarjan.index.contains_key(node) {
            tarjan.visit(node);
        }
    }
    tarjan.found
}

/// The modules that import each other in a circle, as sibling modules: a file of `resolve/` importing
/// one of `derive/` is an edge `resolve -> derive`, whichever files the two paths end in, so a later
/// stage reached from an earlier one through files that do not themselves form a circle is found. A
/// module and the modules inside it are its shape, not an edge.
fn module_circles(src: &Path, graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    let mut modules: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (from, targets) in graph {
        let from_module = module_of(src, from);
        for to in targets {
            let to_module = module_of(src, to);
            let shared = from_module.iter().zip(&to_module).take_while(|(a, b)| a == b).count();
            if shared < from_module.len() && shared < to_module.len() {
                let sibling = |m: &[String]| m[..=shared].iter().collect::<PathBuf>();
                modules.entry(sibling(&from_module)).or_default().insert(sibling(&to_module));
                modules.entry(sibling(&to_module)).or_default();
            }
        }
    }
    circles(&modules)
}

/// Every circle of files, then of modules, in the crate whose sources are under `src`.
fn crate_circles(src: &Path) -> Vec<String> {
    let graph = file_graph(src);
    let root = repo_path("");
    let name = |f: &PathBuf| f.strip_prefix(&root).unwrap_or(f).display().to_string();
    let mut report: Vec<String> = circles(&graph)
        .iter()
        .map(|set| format!("files {}", set.iter().map(name).collect::<Vec<_>>().join(" <-> ")))
        .collect();
    for set in module_circles(src, &graph) {
        let names: Vec<String> = set.iter().map(|m| format!("{}/{}", name(&src.to_path_buf()), m.display())).collect();
        report.push(format!("modules {}", names.join(" <-> ")));
    }
    report
}

#[test]
fn no_two_files_or_modules_of_a_crate_import_each_other_in_a_circle() {
    let report: Vec<String> = crate_roots().iter().flat_map(|src| crate_circles(src)).collect();
    assert!(report.is_empty(), "files and modules that import each other in a circle:\n{}", report.join("\n"));
}

/// The circle the third review found in kix-kube, planted back into a copy of the crate: the rules file
/// importing a type its module's file defines, while that file calls the rules. The checker must see it.
#[test]
fn the_kube_circle_is_found_when_it_is_planted_back() {
    let scratch = tempfile::tempdir().unwrap();
    let src = scratch.path().join("src");
    copy_tree(&repo_path("crates/kube/src"), &src);
    assert!(crate_circles(&src).is_empty(), "the copy has no circle before the planting");
    let validate = src.join("validate/mod.rs");
    let text = std::fs::read_to_string(&validate).unwrap();
    assert!(text.contains("object_rules::check("), "validate calls the rules");
    std::fs::write(&validate, text + "\npub struct Planted;\n").unwrap();
    let rules = src.join("validate/object_rules.rs");
    let text = std::fs::read_to_string(&rules).unwrap();
    std::fs::write(&rules, text + "\n#[allow(unused)]\nuse super::Planted;\n").unwrap();
    let found = crate_circles(&src);
    assert!(found.iter().any(|c| c.contains("validate/mod.rs") && c.contains("validate/object_rules.rs")), "{found:?}");
}

/// A later stage reached from an earlier one, planted into a copy of the compiler: resolve importing
/// from derive, which imports resolve, is a circle of modules even where no two files import each other.
#[test]
fn a_stage_reaching_a_later_one_is_found_when_it_is_planted() {
    let scratch = tempfile::tempdir().unwrap();
    let src = scratch.path().join("src");
    copy_tree(&repo_path("crates/compiler/src"), &src);
    assert!(crate_circles(&src).is_empty(), "the copy has no circle before the planting");
    let support = src.join("resolve/support.rs");
    let text = std::fs::read_to_string(&support).unwrap();
    std::fs::write(&support, text + "\n#[allow(unused)]\nuse crate::derive::ClusterPlan;\n").unwrap();
    let found = crate_circles(&src);
    assert!(
        found.iter().any(|c| c.starts_with("modules") && c.contains("/derive") && c.contains("/resolve")),
        "{found:?}"
    );
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn no_source_file_is_over_700_lines() {
    let root = repo_path("");
    let mut dirs: Vec<PathBuf> = crate_roots().into_iter().map(|src| src.parent().unwrap().to_path_buf()).collect();
    dirs.dedup();
    let mut long = Vec::new();
    for dir in [
        repo_path("src"),
        repo_path("tests"),
        repo_path("benches"),
        repo_path("examples"),
        repo_path("fuzz/fuzz_targets"),
    ]
    .into_iter()
    .chain(dirs.iter().filter(|d| d.starts_with(repo_path("crates"))).cloned())
    {
        if !dir.exists() {
            continue;
        }
        for file in rust_files(&dir) {
            let lines = std::fs::read_to_string(&file).unwrap().lines().count();
            if lines > 700 {
                long.push(format!("{}: {lines} lines", file.strip_prefix(&root).unwrap().display()));
            }
        }
    }
    assert!(long.is_empty(), "source files over 700 lines:\n{}", long.join("\n"));
}

#[test]
fn the_checker_resolves_paths_as_rustc_does() {
    let modules: BTreeMap<Vec<String>, PathBuf> = [
        (vec![], "lib.rs"),
        (vec!["a".to_string()], "a.rs"),
        (vec!["a".to_string(), "b".to_string()], "a/b.rs"),
        (vec!["c".to_string()], "c.rs"),
    ]
    .into_iter()
    .map(|(m, f)| (m, PathBuf::from(f)))
    .collect();
    let refs = references(
        &["a".to_string()],
        "use super::c::{X, y::{self, Z}};\nuse b::Thing; // crate::c::Q in a comment\nfn f() { crate::c::g(); \"self::b\"; b::h(); Vec::new(); std::mem::take(x); k(crate::c::m()); }\npub(in crate::a) fn n() {}\npub(crate) fn h() {}\nmod inner { use super::*; }\n#[cfg(test)]\nmod tests { use crate::c::T; }\n#[cfg(test)]\nmod more_tests;",
    );
    let resolved: BTreeSet<String> = refs
        .paths
        .iter()
        .filter_map(|(within, path)| absolute_path(within, path, &modules))
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(
        resolved.into_iter().collect::<Vec<_>>(),
        ["a", "a::b", "a::b::Thing", "c::X", "c::g", "c::m", "c::y", "c::y::Z"],
        "{:?}",
        refs.paths
    );
    assert_eq!(refs.inline_modules, [vec!["a".to_string(), "inner".to_string()]]);
    assert_eq!(refs.test_modules, [vec!["a".to_string(), "more_tests".to_string()]]);
}

#[test]
fn a_circle_of_two_files_is_found() {
    let a = PathBuf::from("a.rs");
    let b = PathBuf::from("b.rs");
    let c = PathBuf::from("c.rs");
    let graph: BTreeMap<PathBuf, BTreeSet<PathBuf>> = [
        (a.clone(), BTreeSet::from([b.clone()])),
        (b.clone(), BTreeSet::from([a.clone(), c.clone()])),
        (c.clone(), BTreeSet::new()),
    ]
    .into_iter()
    .collect();
    assert_eq!(circles(&graph), [vec![a, b]]);
}
