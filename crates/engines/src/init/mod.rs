//! `kix init`: start a kix root from what a team already has.
//!
//! - `kix init package DIR` writes `DIR/kix.toml` for the manifests already in DIR ([`package`]:
//!   the namespace they were written for, the namespaces they share, the subdirectories to read,
//!   each workload's mapping or the reason it runs one pod).
//! - `kix init cluster NAME [--from-state STATE.yaml]` writes `clusters/NAME.toml` ([`cluster`]:
//!   capabilities and node pools from a snapshot's nodes, or a commented template).
//!
//! Each file starts with a `#:schema` line (Taplo's directive, which Even Better TOML and other TOML
//! language servers read) pointing at the root's `schemas/` by a path relative to the file, as the
//! shipped examples do; the schema itself (`kix schema`) is written there when it is absent, so an
//! editor validates and completes the new file at once. Both refuse to overwrite a file. The text
//! written is deterministic (sorted, fixed layout) and is read back by kix's own loaders in the tests,
//! so `init` never writes something `build` refuses.

mod cluster;
mod package;
mod text;

use text::one;

use kix_diag::{Code, Diagnostic, Diagnostics, Location};
use std::path::{Component, Path, PathBuf};

/// What `kix init` writes.
#[derive(Clone, Debug)]
pub enum InitRequest {
    Package { dir: PathBuf },
    Cluster { root: PathBuf, name: String, from_state: Option<PathBuf> },
}

/// What `kix init` did: the paths it wrote, and what it made of inputs a user may not expect it to (a
/// cordoned or tainted node), one sentence each.
#[derive(Clone, Debug, Default)]
pub struct Initialized {
    pub written: Vec<PathBuf>,
    pub notes: Vec<String>,
}

/// Writes the file the request asks for (and the schema it names, when absent); returns the paths written.
pub fn init(request: &InitRequest) -> Result<Initialized, Diagnostics> {
    let mut notes = Vec::new();
    let (path, schema, text) = match request {
        InitRequest::Package { dir } => {
            let root = package_root(dir);
            let schema = if root == Path::new(".") { PathBuf::from("schemas") } else { root.join("schemas") };
            let schema = schema.join("package.schema.json");
            let line = schema_line(dir, &schema);
            (dir.join("kix.toml"), (schema, false), package::manifest(dir, &line)?)
        }
        InitRequest::Cluster { root, name, from_state } => {
            if let Err(why) = kix_kube::names::dns1123_label(name) {
                return Err(one(Diagnostic::new(
                    Code::InvalidName,
                    format!("cluster name `{name}` is not valid: {why}"),
                )
                .at(Location::file(root.join("clusters")))));
            }
            let schema = root.join("schemas/cluster.schema.json");
            let line = "#:schema ../schemas/cluster.schema.json\n";
            let text = match from_state {
                Some(state) => {
                    let (text, said) = cluster::from_state(name, state, line, root)?;
                    notes = said;
                    text
                }
                None => cluster::template(name, line, root),
            };
            (root.join("clusters").join(format!("{name}.toml")), (schema, true), text)
        }
    };
    if path.exists() {
        return Err(one(Diagnostic::new(
            Code::WriteFailed,
            format!("{} exists; kix init never overwrites a file", path.display()),
        )
        .at(Location::file(&path))));
    }
    let mut written = vec![write(&path, &text)?];
    let (schema, is_cluster) = schema;
    if !schema.exists() {
        written.push(write(&schema, &kix_compiler::load::schema(is_cluster))?);
    }
    Ok(Initialized { written, notes })
}

fn write(path: &Path, text: &str) -> Result<PathBuf, Diagnostics> {
    let written = path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| std::fs::write(path, text));
    match written {
        Ok(()) => Ok(path.to_path_buf()),
        Err(e) => Err(one(Diagnostic::new(Code::WriteFailed, format!("cannot write {}: {e}", path.display()))
            .at(Location::file(path)))),
    }
}

/// The kix root a package directory belongs to: the nearest directory upward holding `clusters/`; else the
/// parent of the `packages/` directory it sits in; else the current directory (as `build` finds its root).
fn package_root(dir: &Path) -> PathBuf {
    let here = std::path::absolute(".").unwrap_or_default();
    let relative = |root: &Path| match root.strip_prefix(&here) {
        Ok(inside) if inside.as_os_str().is_empty() => PathBuf::from("."),
        Ok(inside) => inside.to_path_buf(),
        Err(_) => root.to_path_buf(),
    };
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let absolute = kix_compiler::fs::lexically_normal(&absolute);
    if let Some(root) = absolute.ancestors().skip(1).find(|a| a.join("clusters").is_dir()) {
        return relative(root);
    }
    match absolute.parent() {
        Some(parent) if parent.file_name().is_some_and(|n| n == "packages") => {
            relative(parent.parent().unwrap_or(parent))
        }
        _ => PathBuf::from("."),
    }
}

/// `#:schema <path>` with the schema's path relative to the directory the file is written in.
fn schema_line(from_dir: &Path, schema: &Path) -> String {
    let absolute =
        |p: &Path| kix_compiler::fs::lexically_normal(&std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()));
    let (from, to) = (absolute(from_dir), absolute(schema));
    let (from, to): (Vec<Component>, Vec<Component>) = (from.components().collect(), to.components().collect());
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_string(); from.len() - common];
    parts.extend(to[common..].iter().map(|c| c.as_os_str().to_string_lossy().into_owned()));
    format!("#:schema {}\n", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_lines_are_relative_to_the_file() {
        let cases = [
            ("/r/packages/web", "/r/schemas/package.schema.json", "#:schema ../../schemas/package.schema.json\n"),
            ("/r/deep/er/pkg", "/r/schemas/package.schema.json", "#:schema ../../../schemas/package.schema.json\n"),
            ("/r/./packages/../pkg", "/r/schemas/package.schema.json", "#:schema ../schemas/package.schema.json\n"),
        ];
        for (dir, schema, line) in cases {
            assert_eq!(schema_line(Path::new(dir), Path::new(schema)), line, "{dir}");
        }
    }
}
