#!/usr/bin/env bash
# Issue 42's rebuild rows (docs/performance.md): BASE and NEW kix binaries, each over its own copy of FLEET
# (genfleet output with its allow lines removed), alternated ROUNDS times: a package changed, the change
# undone, the unchanged fleet twice. Prints "<base|new> <row> wall user sys maxrss-KB" per timed build.
# usage: scripts/bench-rebuild.sh BASE NEW FLEET [ROUNDS]
# BUILD_ARGS: the build's arguments (default `-q`; `BUILD_ARGS= ` times plain `kix build`, its table printed).
# SHAPE=first: instead, each round changes another package (pkg-1 .. pkg-7, then again), once, and never
# back, timing only that build (row `first-change`): the shape a user meets first, where the files it
# rewrites are shared by `out/` and the spare (hard links) and cannot be written over in place.
set -u
B=$1; N=$2; F=$3; R=${4:-5}; A=${BUILD_ARGS--q}; S=${SHAPE-cycle}
rm -rf /dev/shm/b42 /dev/shm/n42; cp -r $F /dev/shm/b42; cp -r $F /dev/shm/n42
rm -rf /dev/shm/b42/out /dev/shm/b42/.kix /dev/shm/n42/out /dev/shm/n42/.kix
for d in "$B b42" "$N n42"; do set -- $d; (cd /dev/shm/$2; $1 build $A >/dev/null 2>&1; $1 build $A >/dev/null 2>&1); done
t() { /usr/bin/time -f "$1 %e %U %S %M" "${@:2}" 2>&1 >/dev/null | tail -1; }
for r in $(seq $R); do for d in "$B b42 base" "$N n42 new"; do set -- $d; cd /dev/shm/$2
  if [ "$S" = first ]; then
    # Every package but pkg-0-1.0 runs images tagged :1.1.0 (genfleet), one per line's end.
    sed -i "s/:1\.1\.[0-9]*$/:1.1.$((r + 100))/" packages/pkg-$(( (r - 1) % 7 + 1 ))/workloads.yaml
    t "$3 first-change" $1 build $A
    continue
  fi
  # A tag of its own each round: a change the spare cannot already hold from an earlier round.
  sed -i "s/:1.1.0/:1.1.$((r + 10))/" packages/pkg-1/workloads.yaml
  t "$3 change" $1 build $A
  sed -i "s/:1.1.$((r + 10))/:1.1.0/" packages/pkg-1/workloads.yaml
  $1 build $A >/dev/null 2>&1
  t "$3 unchanged" $1 build $A
  $1 build $A >/dev/null 2>&1
  t "$3 unchanged-again" $1 build $A
done; done
