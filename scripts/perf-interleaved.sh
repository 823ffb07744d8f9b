#!/usr/bin/env bash
# Interleaved base-vs-new timing of docs/performance.md's rows (issue 37's table): each row run by both
# binaries in turn, the order alternating each round; prints row, binary, wall s, user s, sys s, max KB.
#   B=path/to/base/kix N=path/to/new/kix D=/dev/shm/kp scripts/perf-interleaved.sh ROUNDS > times.tsv
# D holds the genfleet roots named in docs/performance.md (f1000, i30k, kp200, v3000n, v3000aa, v3000z,
# v10000n), each fleet built once by both binaries first (into out-base, out-new).
set -u
R=${1:-5}
B=${B:?the base binary}; N=${N:?the new binary}
D=${D:-/dev/shm/kp}
timed() { /usr/bin/time -f "%e	%U	%S	%M" "$@" 2>&1 >/dev/null | tail -1; }
row() { # name pre-command(with BIN/OUT) timed-command-args...
  local name=$1 pre=$2; shift 2
  local order="base new"; [ $((r % 2)) = 0 ] && order="new base"
  for bin in $order; do
    local exe=$B; [ $bin = new ] && exe=$N
    local p=${pre//BIN/$exe}; p=${p//OUT/out-$bin}
    local args=(); for a in "$@"; do a=${a//BIN/$exe}; a=${a//OUT/out-$bin}; args+=("$a"); done
    ( cd $dir && eval "$p" >/dev/null 2>&1; timed "${args[@]}" ) | sed "s/^/$name	$bin	/"
  done
}
for r in $(seq 1 $R); do
  dir=$D/f1000
  row build_unchanged ":" BIN build -q --out OUT
  row rebuild_pkg1 "sed -i 's/:1.1.0/:1.1.1/' packages/pkg-1/workloads.yaml" BIN build -q --out OUT
  ( cd $dir && sed -i 's/:1.1.1/:1.1.0/' packages/pkg-1/workloads.yaml && $B build -q --out out-base && $N build -q --out out-new )
  row cluster_c0500 ":" BIN build -q --cluster c0500 --out OUT
  row stdout_all ":" BIN build -q --stdout --all
  row check_fleet ":" BIN check -q
  dir=$D/i30k
  row check_30k ":" BIN check -q
  dir=$D/kp200
  row kp200_empty "rm -rf OUT .OUT.kix-manifest .OUT.kix-spare" BIN build -q --out OUT
  dir=$D
  row verify_node_3000 ":" BIN verify -q --root v3000n
  row verify_node_3000_aa ":" BIN verify -q --root v3000aa
  row verify_zone_3000 ":" BIN verify -q --root v3000z
  row verify_node_10000 ":" BIN verify -q --root v10000n
done
