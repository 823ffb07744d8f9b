#!/usr/bin/env bash
# Issue 42's package-change row in the shape a user meets first: each round changes another package, once,
# and never changes it back, so the files it rewrites are shared by `out/` and the spare (hard links) and
# cannot be written over in place. BASE and NEW kix binaries, each over its own copy of FLEET (genfleet
# output with its allow lines removed), alternated ROUNDS times (at most the fleet's 8 packages' worth of
# changes: pkg-0 .. pkg-7, then again with another tag). Prints "<base|new> first-change wall user sys
# maxrss-KB" per timed build.
# usage: scripts/bench-first-change.sh BASE NEW FLEET [ROUNDS]
# BUILD_ARGS: the build's arguments (default `-q`; `BUILD_ARGS= ` times plain `kix build`, its table printed).
set -u
B=$1; N=$2; F=$3; R=${4:-5}; A=${BUILD_ARGS--q}
rm -rf /dev/shm/b42 /dev/shm/n42; cp -r $F /dev/shm/b42; cp -r $F /dev/shm/n42
rm -rf /dev/shm/b42/out /dev/shm/b42/.kix /dev/shm/n42/out /dev/shm/n42/.kix
for d in "$B b42" "$N n42"; do set -- $d; (cd /dev/shm/$2; $1 build $A >/dev/null 2>&1; $1 build $A >/dev/null 2>&1); done
t() { /usr/bin/time -f "$1 %e %U %S %M" "${@:2}" 2>&1 >/dev/null | tail -1; }
for r in $(seq $R); do for d in "$B b42 base" "$N n42 new"; do set -- $d; cd /dev/shm/$2
  # Every package but pkg-0-1.0 (a second version of pkg-0) runs an image tagged :1.1.0 in workloads.yaml.
  p=$(( (r - 1) % 7 + 1 )); sed -i "s/:1\.1\.[0-9]*$/:1.1.$((r + 100))/" packages/pkg-$p/workloads.yaml
  t "$3 first-change" $1 build $A
done; done
