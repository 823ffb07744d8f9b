#!/usr/bin/env bash
# Issue 42's package-change row beside its floor (docs/performance.md, "the floor"): in each round, on this
# machine in the same minute, `kix build` after a package change, the same build after the change is
# undone and once more unchanged, and `io_floor` (examples/io_floor.rs: only the system calls such a build
# cannot avoid, on a copy of the same fleet). Prints each round, then the medians.
# usage: scripts/bench-floor.sh KIX IO_FLOOR FLEET [ROUNDS]
# KIX and IO_FLOOR are absolute paths (`cargo build --release --bin kix --example io_floor`); FLEET is
# `genfleet --clusters 1000 --instances 100 --workloads 3` with its `allow` lines removed.
# BUILD_ARGS: the build's arguments (default none: plain `kix build`; `-q` for the quiet row).
set -u
K=$1; F=$2; FLEET=$3; R=${4:-9}; A=${BUILD_ARGS-}
rm -rf /dev/shm/floor-k /dev/shm/floor-f
cp -r "$FLEET" /dev/shm/floor-k; cp -r "$FLEET" /dev/shm/floor-f
rm -rf /dev/shm/floor-k/out /dev/shm/floor-k/.kix /dev/shm/floor-f/out /dev/shm/floor-f/.kix
# Both copies built, changed, undone and built again: each has out/, its spare and its manifest.
for d in floor-k floor-f; do
  (cd /dev/shm/$d && $K build -q >/dev/null 2>&1 &&
    sed -i "s/:1.1.0/:1.1.9/" packages/pkg-1/workloads.yaml && $K build -q >/dev/null 2>&1 &&
    sed -i "s/:1.1.9/:1.1.0/" packages/pkg-1/workloads.yaml && $K build -q >/dev/null 2>&1 && $K build -q >/dev/null 2>&1)
done
out=$(mktemp)
for r in $(seq "$R"); do
  cd /dev/shm/floor-k || exit 1
  sed -i "s/:1.1.0/:1.1.$((r + 10))/" packages/pkg-1/workloads.yaml
  /usr/bin/time -f "change $r %e %U %S" $K build $A 2>&1 >/dev/null | tail -1 | tee -a "$out"
  sed -i "s/:1.1.$((r + 10))/:1.1.0/" packages/pkg-1/workloads.yaml
  $K build $A >/dev/null 2>&1
  /usr/bin/time -f "unchanged $r %e %U %S" $K build $A 2>&1 >/dev/null | tail -1 | tee -a "$out"
  "$F" /dev/shm/floor-f | sed -E "s/.*manifest read ([0-9.]+) s, stat ([0-9.]+) s, write ([0-9.]+) s, next manifest ([0-9.]+) s; total ([0-9.]+) s, CPU ([0-9.]+) s/floor $r \5 cpu \6 read \1 stat \2 write \3 next \4/" | tee -a "$out"
done
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for row in change unchanged floor; do
  cpu=$(awk -v r=$row '$1 == r {print (r == "floor") ? $5 : $4 + $5}' "$out" | median)
  echo "$row: median wall $(awk -v r=$row '$1 == r {print $3}' "$out" | median) s, fastest $(awk -v r=$row '$1 == r {print $3}' "$out" | sort -g | head -1) s, median CPU $cpu s"
done
for c in read stat write next; do
  echo "floor $c: median $(awk -v c=$c '$1 == "floor" {for (i = 4; i < NF; i++) if ($i == c) print $(i + 1)}' "$out" | median) s"
done
rm -f "$out"
