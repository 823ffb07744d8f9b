//! R13: which version of a package an instance gets.
//!
//! The highest version that meets the instance's semver requirement wins;
//! without a requirement a pre-release is chosen only when the package has no
//! release (as cargo and helm choose). A package that failed validation is
//! absent here: an instance naming it gets no second error.

use super::model::Package;
use super::package::Packages;
use crate::load::cluster::RawInstance;
use kix_diag::{Code, Diagnostic, Diagnostics, SourceFile, Subject};
use semver::{Version, VersionReq};
use std::sync::Arc;

/// The version of the named package the instance runs, or `None` with the reason reported.
pub fn choose_package(
    source: &SourceFile,
    instance: &RawInstance,
    packages: &Packages,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> Option<Arc<Package>> {
    let wanted = instance.package.get_ref();
    let candidates: Vec<&Arc<Package>> = packages.valid.iter().filter(|p| &p.name == wanted).collect();
    let may_have_failed = packages.may_have_failed(wanted);
    if candidates.is_empty() && may_have_failed {
        // The package's own error is reported; a second one here would only mislead.
        return None;
    }
    if candidates.is_empty() {
        let mut known: Vec<&str> = packages.valid.iter().map(|p| p.name.as_str()).collect();
        known.dedup();
        diagnostics.push(
            Diagnostic::new(Code::PackageNotFound, format!("package `{wanted}` does not exist"))
                .at(source.locate(instance.package.span()))
                .about(subject)
                .help(if packages.not_packages.iter().any(|dir| dir == wanted) {
                    // The directory is there without a kix.toml (K0107 says so): say how to make one.
                    format!(
                        "packages/{wanted}/ has no kix.toml: `kix init package packages/{wanted}` writes one for the manifests there"
                    )
                } else if known.is_empty() {
                    "there are no packages under packages/".to_string()
                } else {
                    format!("packages that exist: {}", known.join(", "))
                }),
        );
        return None;
    }
    let requirement = match &instance.version {
        None => VersionReq::STAR,
        Some(spanned) => match VersionReq::parse(spanned.get_ref()) {
            Ok(requirement) => requirement,
            Err(error) => {
                diagnostics.push(
                    Diagnostic::new(
                        Code::InvalidRequirement,
                        format!("version requirement `{}` is not valid: {error}", spanned.get_ref()),
                    )
                    .at(source.locate(spanned.span()))
                    .about(subject),
                );
                return None;
            }
        },
    };
    // With a requirement, semver's own rules apply (pre-releases only when named).
    let only_prereleases = candidates.iter().all(|p| !p.version.pre.is_empty());
    let matches = |version: &Version| match &instance.version {
        Some(_) => requirement.matches(version),
        None => version.pre.is_empty() || only_prereleases,
    };
    let best = candidates.iter().filter(|p| matches(&p.version)).max_by(|a, b| a.version.cmp(&b.version));
    if best.is_none() && !may_have_failed {
        let mut versions: Vec<&Version> = candidates.iter().map(|p| &p.version).collect();
        versions.sort();
        let listed: Vec<String> = versions.iter().map(|v| v.to_string()).collect();
        diagnostics.push(
            Diagnostic::new(
                Code::NoMatchingVersion,
                format!(
                    "no version of package `{wanted}` matches `{requirement}`; versions there are: {}",
                    listed.join(", ")
                ),
            )
            .at(source.locate(instance.version.as_ref().map_or_else(|| instance.package.span(), |v| v.span())))
            .about(subject),
        );
    }
    best.map(|p| Arc::clone(p))
}
