//! One vocabulary for Kubernetes, below both the compiler and the scheduler model.
//!
//! What belongs here: the Kubernetes API's own rules and shapes, and the few words
//! kix itself writes on objects that every stage and the model share ([`kix_names`],
//! a leaf) — DNS-1123 names and label keys ([`names`]), well-known label and taint
//! keys ([`labels`]), label selectors ([`selector`]), resource quantities
//! ([`quantity`]), a pod's requests as the scheduler counts them ([`requests`]), IntOrString percent values ([`int_or_percent`]), taints and
//! tolerations ([`taints`]), group-aware object kinds ([`kind`]), lists and their items
//! ([`list`]), the one reader of
//! Deployments, StatefulSets and PodDisruptionBudgets ([`workload`]), autoscalers
//! ([`autoscaler`]), operators' kinds that run pods ([`operators`]), where one object names another ([`references`]), which kinds are cluster-scoped ([`scope`]), where a pod's volumes bind it ([`volumes`]), object validation with the API server's rules ([`validate`]) and strict
//! validation of whole objects against Kubernetes 1.33's schema and the package's CRDs
//! ([`strict`]). Each file cites the
//! upstream code it follows.
//!
//! Who may import it: everyone. What it may import: std, serde, kix's `yaml` layer,
//! k8s-openapi, serde_ignored, serde_json, strsim and thiserror — never `load`, `resolve`, `derive`, `emit`,
//! `compile`, `inventory`, `diag`, `sim` or the CLI. Errors are structured
//! (a field path and a reason); the caller turns them into located diagnostics.
//!
//! Access to `kix_yaml::Value` goes through the few helpers in [`value`], so that
//! the YAML layer can be swapped underneath without touching the readers.

pub mod autoscaler;
pub mod int_or_percent;
pub mod kind;
pub mod kix_names;
pub mod labels;
pub mod level;
pub mod list;
pub mod names;
pub mod operators;
pub mod profile;
pub mod quantity;
pub mod references;
pub mod requests;
pub mod scope;
pub mod selector;
pub mod strict;
pub mod taints;
pub mod validate;
pub mod value;
pub mod volumes;
pub mod workload;
