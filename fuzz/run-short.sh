#!/usr/bin/env bash
# A short, bounded fuzz run of every kix fuzz target (CI calls this from .ci/run).
#
#   fuzz/run-short.sh              # about 20 s per target after the build
#   KIX_FUZZ_SECONDS=300 fuzz/run-short.sh
#
# 1. Installs cargo-fuzz when it is missing.
# 2. Replays every input under fuzz/regressions/<target>/ (inputs that once crashed kix).
# 3. Fuzzes each target for KIX_FUZZ_SECONDS (default 20), starting from those inputs,
#    with a scratch corpus so the tree stays clean.
# Exits non-zero when any target crashes; the crashing input is left under
# fuzz/artifacts/<target>/ and the command to reproduce it is printed.
#
# cargo-fuzz needs nightly features (-Zsanitizer). A fresh machine has only the
# stable toolchain, so the script always uses the default toolchain with
# RUSTC_BOOTSTRAP=1: the path taken here is the path CI takes everywhere.
set -euo pipefail
cd "$(dirname "$0")"

seconds="${KIX_FUZZ_SECONDS:-20}"
targets=(cluster_parser package_parser build_tree yaml_fast)

if ! command -v cargo-fuzz >/dev/null 2>&1 && ! cargo fuzz --version >/dev/null 2>&1; then
    echo "== installing cargo-fuzz"
    cargo install --locked cargo-fuzz
fi

export RUSTC_BOOTSTRAP=1
# Development builds (no optimisation, debug assertions on): kix's strict validation instantiates
# serde for ~90 k8s-openapi types, which takes over 20 minutes to optimise with cargo-fuzz's
# single codegen unit on a 2-core machine, against under 2 minutes here. A bounded smoke run
# favours the build; longer campaigns can use `cargo fuzz run --release`.
fuzz=(cargo fuzz)
profile=(--dev)

echo "== building fuzz targets (${fuzz[*]})"
"${fuzz[@]}" build "${profile[@]}"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
failed=()
for target in "${targets[@]}"; do
    seeds=()
    if [ -d "regressions/$target" ] && [ -n "$(ls -A "regressions/$target")" ]; then
        seeds=("regressions/$target")
        echo "== $target: replaying regressions/$target"
        if ! "${fuzz[@]}" run "${profile[@]}" "$target" "regressions/$target" -- -runs=0 >"$scratch/$target.replay.log" 2>&1; then
            grep -E -A2 'panicked at' "$scratch/$target.replay.log" || true
            tail -25 "$scratch/$target.replay.log"
            failed+=("$target (regression input)")
            continue
        fi
    fi
    echo "== $target: fuzzing for ${seconds}s"
    mkdir -p "$scratch/corpus/$target"
    if ! "${fuzz[@]}" run "${profile[@]}" "$target" "$scratch/corpus/$target" "${seeds[@]}" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 >"$scratch/$target.log" 2>&1; then
        grep -E -A2 'panicked at' "$scratch/$target.log" || true
        tail -25 "$scratch/$target.log"
        failed+=("$target")
        continue
    fi
    grep -E '^Done [0-9]+ runs' "$scratch/$target.log" || true
done

if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzz: crashes in: ${failed[*]}" >&2
    echo "fuzz: reproduce with: cd fuzz && ${fuzz[*]} run ${profile[*]} <target> artifacts/<target>/<crash file>" >&2
    exit 1
fi
echo "fuzz: ${#targets[@]} targets ran ${seconds}s each without a crash"
