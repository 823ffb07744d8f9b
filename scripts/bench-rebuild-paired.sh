#!/usr/bin/env bash
# Issue 42's package-change row as paired rounds (docs/performance.md, "a seventh step"): BASE and NEW kix
# binaries, each over its own copy of FLEET, time only the build after a package change; each round runs
# both, in an order swapped every round, and the difference is taken round by round, so a slow minute of
# this machine slows both sides of a pair. Prints each timed build, then the medians and the paired
# difference (NEW - BASE) of wall, user and system time.
# usage: scripts/bench-rebuild-paired.sh BASE NEW FLEET [ROUNDS]
# BUILD_ARGS: the build's arguments (default `-q`; `BUILD_ARGS= ` times plain `kix build`).
set -u
B=$1; N=$2; F=$3; R=${4:-16}; A=${BUILD_ARGS--q}
rm -rf /dev/shm/b42 /dev/shm/n42; cp -r "$F" /dev/shm/b42; cp -r "$F" /dev/shm/n42
rm -rf /dev/shm/b42/out /dev/shm/b42/.kix /dev/shm/n42/out /dev/shm/n42/.kix
for d in "$B b42" "$N n42"; do set -- $d; (cd /dev/shm/$2; $1 build $A >/dev/null 2>&1; $1 build $A >/dev/null 2>&1); done
out=$(mktemp)
one() {
  cd /dev/shm/$2 || exit 1
  # A tag of its own each round, then undone and built twice (the state the next round's change meets).
  sed -i "s/:1.1.0/:1.1.$((r + 10))/" packages/pkg-1/workloads.yaml
  /usr/bin/time -f "$3 $r %e %U %S" $1 build $A 2>&1 >/dev/null | tail -1 | tee -a "$out"
  sed -i "s/:1.1.$((r + 10))/:1.1.0/" packages/pkg-1/workloads.yaml
  $1 build $A >/dev/null 2>&1; $1 build $A >/dev/null 2>&1
}
for r in $(seq "$R"); do
  if [ $((r % 2)) = 1 ]; then one "$B" b42 base; one "$N" n42 new; else one "$N" n42 new; one "$B" b42 base; fi
done
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for c in 3 4 5; do
  name=$(echo "wall user sys" | cut -d' ' -f$((c - 2)))
  b=$(awk -v c=$c '$1 == "base" {print $c}' "$out" | median)
  n=$(awk -v c=$c '$1 == "new" {print $c}' "$out" | median)
  d=$(awk -v c=$c '{v[$1 " " $2] = $c} END {for (k in v) if (k ~ /^new /) {split(k, p, " "); print v[k] - v["base " p[2]]}}' "$out" | median)
  faster=$(awk -v c=$c '{v[$1 " " $2] = $c} END {n = 0; for (k in v) if (k ~ /^new /) {split(k, p, " "); if (v[k] < v["base " p[2]]) n++} print n}' "$out")
  echo "$name: base median $b s, new median $n s, paired difference median $d s, new faster in $faster of $R"
done
rm -f "$out"
