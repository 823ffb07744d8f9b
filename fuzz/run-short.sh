#!/usr/bin/env bash
# A bounded fuzz run of every kix fuzz target (CI calls this from .ci/run).
#
#   fuzz/run-short.sh                                  # about 20 s per target after the build
#   KIX_FUZZ_SECONDS=600 fuzz/run-short.sh --keep-corpus   # the long run (fuzz/README.md)
#   fuzz/run-short.sh hostile_tree build_tree          # only these targets
#
# 1. Installs cargo-fuzz when it is missing.
# 2. Replays every input under fuzz/regressions/<target>/ (inputs that once crashed kix).
# 3. Fuzzes each target for KIX_FUZZ_SECONDS (default 20), one process on one core, starting
#    from the kept corpus fuzz/corpus/<target>/ and the regressions, in a scratch copy so the
#    tree stays clean.
# 4. With --keep-corpus: minimises what the run found together with the kept corpus
#    (libFuzzer's -merge=1: the smallest set of inputs with the same coverage) and replaces
#    fuzz/corpus/<target>/ with it.
# Prints each target's final libFuzzer figures (runs, exec/s, cov, ft, corpus). Exits non-zero
# when any target crashes; the crashing input is left under fuzz/artifacts/<target>/ and the
# command to reproduce it is printed.
#
# cargo-fuzz needs nightly features (-Zsanitizer). A fresh machine has only the
# stable toolchain, so the script always uses the default toolchain with
# RUSTC_BOOTSTRAP=1: the path taken here is the path CI takes everywhere.
set -euo pipefail
cd "$(dirname "$0")"

seconds="${KIX_FUZZ_SECONDS:-20}"
keep_corpus=false
targets=()
for arg in "$@"; do
    case "$arg" in
        --keep-corpus) keep_corpus=true ;;
        -*) echo "usage: fuzz/run-short.sh [--keep-corpus] [target...]" >&2; exit 2 ;;
        *) targets+=("$arg") ;;
    esac
done
if [ "${#targets[@]}" -eq 0 ]; then
    targets=(cluster_parser package_parser build_tree yaml_fast hostile_tree)
fi

if ! command -v cargo-fuzz >/dev/null 2>&1 && ! cargo fuzz --version >/dev/null 2>&1; then
    echo "== installing cargo-fuzz"
    cargo install --locked cargo-fuzz
fi

export RUSTC_BOOTSTRAP=1
# Development builds (debug assertions on, kix's own code unoptimised): kix's strict validation
# instantiates serde for ~90 k8s-openapi types, which takes over 20 minutes to optimise with
# cargo-fuzz's single codegen unit on a 2-core machine. fuzz/Cargo.toml optimises the
# dependencies only (`[profile.dev.package."*"]`), so the fuzzed code keeps its checks and the
# targets run fast.
fuzz=(cargo fuzz)
profile=(--dev)

echo "== building fuzz targets (${fuzz[*]})"
"${fuzz[@]}" build "${profile[@]}"

# libFuzzer's entropic schedule (its default) keeps every feature seen fewer than 255 times in a
# list it searches linearly for each feature of each run: the two tree targets reach ~70,000
# features through the whole unoptimised compiler, and that search alone held them at 2 runs a
# second. The classic schedule runs them six times as fast (fuzz/README.md has the figures).
flags_of() {
    case "$1" in
        build_tree | hostile_tree) echo "-entropic=0" ;;
    esac
}

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
failed=()
for target in "${targets[@]}"; do
    seeds=()
    if [ -d "regressions/$target" ] && [ -n "$(ls -A "regressions/$target")" ]; then
        seeds+=("regressions/$target")
        echo "== $target: replaying regressions/$target"
        if ! "${fuzz[@]}" run "${profile[@]}" "$target" "regressions/$target" -- -runs=0 >"$scratch/$target.replay.log" 2>&1; then
            grep -E -A2 'panicked at' "$scratch/$target.replay.log" || true
            tail -25 "$scratch/$target.replay.log"
            failed+=("$target (regression input)")
            continue
        fi
    fi
    corpus="$scratch/corpus/$target"
    mkdir -p "$corpus"
    if [ -d "corpus/$target" ]; then
        cp -r "corpus/$target/." "$corpus/"
    fi
    echo "== $target: fuzzing for ${seconds}s from $(ls "$corpus" | wc -l) kept inputs"
    # shellcheck disable=SC2046 # flags_of gives zero or more words
    if ! "${fuzz[@]}" run "${profile[@]}" "$target" "$corpus" "${seeds[@]}" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 $(flags_of "$target") \
        >"$scratch/$target.log" 2>&1; then
        grep -E -A2 'panicked at' "$scratch/$target.log" || true
        tail -25 "$scratch/$target.log"
        failed+=("$target")
        continue
    fi
    # The last status line holds the coverage (cov: edges, ft: features) and the corpus size.
    grep -E '^#[0-9]+' "$scratch/$target.log" | tail -1 || true
    grep -E '^Done [0-9]+ runs|^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$scratch/$target.log" || true
    if $keep_corpus; then
        merged="$scratch/merged/$target"
        mkdir -p "$merged"
        "${fuzz[@]}" run "${profile[@]}" "$target" "$merged" "$corpus" -- -merge=1 -timeout=10 \
            >"$scratch/$target.merge.log" 2>&1
        rm -rf "corpus/$target"
        mkdir -p corpus
        cp -r "$merged" "corpus/$target"
        echo "== $target: kept $(ls "corpus/$target" | wc -l) inputs ($(cat "corpus/$target"/* | wc -c) bytes) in fuzz/corpus/$target"
    fi
done

if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzz: crashes in: ${failed[*]}" >&2
    echo "fuzz: reproduce with: cd fuzz && ${fuzz[*]} run ${profile[*]} <target> artifacts/<target>/<crash file>" >&2
    exit 1
fi
echo "fuzz: ${#targets[@]} targets ran ${seconds}s each without a crash"
