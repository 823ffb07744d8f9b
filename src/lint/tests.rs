//! Unit tests of the lint rules, table-driven over small manifests.
