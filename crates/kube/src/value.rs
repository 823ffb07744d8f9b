//! The few helpers through which kube/ reads `kix_yaml::Value`.
//!
//! Every reader in kube/ walks objects through these functions only, so that
//! swapping the YAML layer underneath is a change to this file. An explicit
//! `null` reads as absent, as the API server's decoder treats it.

use kix_yaml::Value;

/// The value at a path of mapping keys; `None` when absent or null.
pub fn at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut current = value;
    for key in path {
        current = current.get(key)?;
    }
    if current.is_null() { None } else { Some(current) }
}

/// The string at a path, if it is a string.
pub fn str_at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a str> {
    at(value, path).and_then(Value::as_str)
}
