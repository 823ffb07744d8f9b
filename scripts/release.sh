#!/usr/bin/env bash
# Builds kix's release archive: the binary, its man pages and shell completions, the README and
# the JSON Schemas, packed into dist/kix-<version>-<target>.tar.gz (and a .sha256 beside it).
#
#   scripts/release.sh [--binary PATH] [--out DIR]
#
# Without --binary it builds with `cargo build --release --locked` (what .ci/run does); with it,
# it packs that binary (the tests pass the one under test). The archive is reproducible: entries
# sorted, owner 0, mtime of the last commit (or 0 outside git), gzip without a timestamp. The
# archive's binary is stripped (a CI job downloads it: 18.4 MB instead of the 128 MB cargo's
# release profile writes with line tables); its debug information is kept apart, beside the
# archive, as dist/kix-<version>-<target>.debug (`objcopy --only-keep-debug`), for symbolising a
# backtrace.
#
# Layout inside the archive (install by copying bin/ and share/ under a prefix, e.g. /usr/local):
#   kix-<version>-<target>/bin/kix
#   kix-<version>-<target>/share/man/man1/kix.1, kix-build.1, ... (a page per command)
#   kix-<version>-<target>/share/bash-completion/completions/kix
#   kix-<version>-<target>/share/zsh/site-functions/_kix
#   kix-<version>-<target>/share/fish/vendor_completions.d/kix.fish
#   kix-<version>-<target>/share/doc/kix/README.md, schemas/*.json
set -euo pipefail
cd "$(dirname "$0")/.."

binary=""
out="dist"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --binary) binary="${2:?--binary needs a path}"; shift 2 ;;
        --out) out="${2:?--out needs a directory}"; shift 2 ;;
        *) echo "usage: scripts/release.sh [--binary PATH] [--out DIR]" >&2; exit 2 ;;
    esac
done

if [[ -z "$binary" ]]; then
    cargo build --release --locked --bin kix
    binary="target/release/kix"
fi
[[ -x "$binary" ]] || { echo "release.sh: $binary is not an executable" >&2; exit 1; }

version="$("$binary" --version | awk '{print $2}')"
target="${KIX_TARGET:-$(rustc -vV | sed -n 's/^host: //p')}"
name="kix-${version}-${target}"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
root="$stage/$name"

install -D -m 0755 "$binary" "$root/bin/kix"
mkdir -p "$out"
objcopy --only-keep-debug "$binary" "$out/$name.debug"
strip --strip-all "$root/bin/kix"
objcopy --add-gnu-debuglink="$out/$name.debug" "$root/bin/kix"
mkdir -p "$root/share/man/man1" "$root/share/bash-completion/completions" \
    "$root/share/zsh/site-functions" "$root/share/fish/vendor_completions.d" "$root/share/doc/kix/schemas"
"$binary" --quiet man --out "$root/share/man/man1"
"$binary" completions bash > "$root/share/bash-completion/completions/kix"
"$binary" completions zsh > "$root/share/zsh/site-functions/_kix"
"$binary" completions fish > "$root/share/fish/vendor_completions.d/kix.fish"
install -m 0644 README.md "$root/share/doc/kix/README.md"
install -m 0644 schemas/*.json "$root/share/doc/kix/schemas/"

mtime="$(git log -1 --format=%ct 2>/dev/null || echo 0)"
mkdir -p "$out"
archive="$out/$name.tar.gz"
tar --sort=name --mtime="@$mtime" --owner=0 --group=0 --numeric-owner -C "$stage" -cf - "$name" | gzip -n > "$archive"
(cd "$out" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
echo "$archive"
