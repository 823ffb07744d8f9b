//! Name and label-key validation with the API server's own rules (R14).
//!
//! Cluster, instance, package and namespace names become paths under `out/`
//! and object namespaces, so they must be DNS-1123 labels; failure-domain keys
//! become `topologyKey`s, so they must be valid label keys. The rules mirror
//! staging/src/k8s.io/apimachinery/pkg/util/validation (`IsDNS1123Label`,
//! `IsDNS1123Subdomain`, `IsQualifiedName`, `IsValidLabelValue`).

/// Namespaces every cluster has: Kubernetes' "initial namespaces" (kubernetes.io
/// docs/concepts/overview/working-with-objects/namespaces), which the API server creates and keeps
/// (`metav1.NamespaceDefault`, `NamespaceSystem`, `NamespacePublic`, `v1.NamespaceNodeLease`;
/// pkg/controlplane/controller/systemnamespaces). A package ships into them to share something with the rest
/// of the cluster (RBAC for scraping, an auth-reader binding); they are never a package's own.
pub const SYSTEM_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public", "kube-node-lease"];

/// Whether a namespace is one every cluster has ([`SYSTEM_NAMESPACES`]).
pub fn is_system_namespace(namespace: &str) -> bool {
    SYSTEM_NAMESPACES.contains(&namespace)
}

/// Why a name was refused, phrased to complete "… is not valid: <reason>".
pub type Refusal = String;

/// A DNS-1123 label: 1-63 characters of `[a-z0-9-]`, starting and ending alphanumeric.
pub fn dns1123_label(name: &str) -> Result<(), Refusal> {
    if name.is_empty() {
        return Err("must not be empty".into());
    }
    if name.len() > 63 {
        return Err(format!("must be at most 63 characters (it has {})", name.len()));
    }
    if !name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') {
        return Err("must consist of lower-case letters, digits and '-'".into());
    }
    if name.starts_with('-') || name.ends_with('-') {
        return Err("must start and end with a letter or digit".into());
    }
    Ok(())
}

/// A DNS-1123 subdomain: at most 253 characters of dot-separated labels.
pub fn dns1123_subdomain(name: &str) -> Result<(), Refusal> {
    if name.is_empty() {
        return Err("must not be empty".into());
    }
    if name.len() > 253 {
        return Err(format!("must be at most 253 characters (it has {})", name.len()));
    }
    if !name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.') {
        return Err("must consist of lower-case letters, digits, '-' and '.'".into());
    }
    for part in name.split('.') {
        if part.is_empty() || part.starts_with('-') || part.ends_with('-') {
            return Err("each dot-separated part must start and end with a letter or digit".into());
        }
    }
    Ok(())
}

/// The name part of a label key, and a label value when non-empty:
/// at most 63 characters of `[A-Za-z0-9-_.]`, starting and ending alphanumeric.
fn qualified_name_part(name: &str) -> Result<(), Refusal> {
    if name.is_empty() {
        return Err("the name part must not be empty".into());
    }
    if name.len() > 63 {
        return Err(format!("the name part must be at most 63 characters (it has {})", name.len()));
    }
    if !name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')) {
        return Err("the name part must consist of letters, digits, '-', '_' and '.'".into());
    }
    let first = name.as_bytes()[0];
    let last = name.as_bytes()[name.len() - 1];
    if !first.is_ascii_alphanumeric() || !last.is_ascii_alphanumeric() {
        return Err("the name part must start and end with a letter or digit".into());
    }
    Ok(())
}

/// A label key: an optional DNS-1123 subdomain prefix and `/`, then a name part.
pub fn label_key(key: &str) -> Result<(), Refusal> {
    match key.split_once('/') {
        Some((prefix, name)) => {
            dns1123_subdomain(prefix).map_err(|why| format!("the prefix {why}"))?;
            qualified_name_part(name)
        }
        None => qualified_name_part(key),
    }
}

/// A label value: empty, or a name part.
pub fn label_value(value: &str) -> Result<(), Refusal> {
    if value.is_empty() {
        Ok(())
    } else {
        qualified_name_part(value).map_err(|why| why.replace("the name part", "the value"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // R14: cluster and instance names are DNS-1123 labels.
    #[test]
    fn r14_dns1123_labels() {
        for ok in ["a", "shop", "eu-1", "0abc", &"a".repeat(63)] {
            assert!(dns1123_label(ok).is_ok(), "{ok}");
        }
        for bad in ["", "-a", "a-", "Shop", "a_b", "a.b", "../x", "a/b", &"a".repeat(64)] {
            assert!(dns1123_label(bad).is_err(), "{bad}");
        }
    }

    // R14: failure-domain keys are label keys with an optional prefix of up to 253 characters.
    #[test]
    fn r14_label_keys() {
        for ok in [
            "kubernetes.io/hostname",
            "topology.kubernetes.io/zone",
            "rack",
            "example.com/Rack_1.a",
            &format!("{}/x", "a".repeat(253)),
        ] {
            assert!(label_key(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "/x",
            "a/",
            "a/b/c",
            "-rack",
            "rack-",
            "Example.com/x",
            "a b",
            &format!("{}/x", "a".repeat(254)),
            &"a".repeat(64),
        ] {
            assert!(label_key(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn dns1123_subdomains() {
        let cases = [
            ("a", true),
            ("web.example.com", true),
            ("a-b.c", true),
            (&*"a".repeat(253), true),
            ("", false),
            (".a", false),
            ("a.", false),
            ("a..b", false),
            ("A.b", false),
            ("a_b", false),
            (&*"a".repeat(254), false),
        ];
        for (name, ok) in cases {
            assert_eq!(dns1123_subdomain(name).is_ok(), ok, "{name}");
        }
    }

    #[test]
    fn label_values() {
        assert!(label_value("").is_ok());
        assert!(label_value("v1.2_3").is_ok());
        assert!(label_value("-x").is_err());
        assert!(label_value(&"x".repeat(64)).is_err());
    }
}
