#!/usr/bin/env bash
# Prepares the Docker build context of kix's Argo CD sidecar (argocd/Dockerfile): the kix binary,
# argocd/plugin.yaml and the Dockerfile, in one directory.
#
#   scripts/argocd-sidecar.sh [--binary PATH] OUTDIR
#
# Without --binary it builds kix with `cargo build --release --locked` (what CI runs); with it,
# it packs that binary instead (the tests pass the one under test). Then:
#   docker build -t kix-argocd-cmp OUTDIR
set -euo pipefail
cd "$(dirname "$0")/.."

binary=""
if [[ "${1:-}" == "--binary" ]]; then
    binary="${2:?--binary needs a path}"
    shift 2
fi
out="${1:?usage: scripts/argocd-sidecar.sh [--binary PATH] OUTDIR}"

if [[ -z "$binary" ]]; then
    cargo build --release --locked --bin kix
    binary="target/release/kix"
fi
[[ -x "$binary" ]] || { echo "argocd-sidecar.sh: $binary is not an executable" >&2; exit 1; }

mkdir -p "$out"
install -m 0755 "$binary" "$out/kix"
# The image carries the stripped binary, as the release archive does (scripts/release.sh).
strip --strip-all "$out/kix"
install -m 0644 argocd/plugin.yaml argocd/Dockerfile "$out/"
echo "argocd-sidecar.sh: context ready in $out; build it with: docker build -t kix-argocd-cmp $out" >&2
