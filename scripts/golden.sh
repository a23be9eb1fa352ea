#!/bin/sh
# Golden outputs: the text and --json output of every example for every command that answers it,
# committed under tests/golden/ and compared by ctest (test `golden_outputs`), like SimGrid's
# .tesh files. A change that alters an output fails the test; when the change is intended,
# review the diff and refresh the files:
#
#   scripts/golden.sh --update build/cli/gpuplan      (or: make golden)
#
# Usage: scripts/golden.sh --check|--update GPUPLAN_BINARY
# Outputs are made from the repository root with relative paths; the repository's absolute path
# (which appears where a built-in profile is named) is written as "<root>".
set -eu
mode=$1
bin=$2
root=$(cd "$(dirname "$0")/.." && pwd)
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
cd "$root"
out=tests/golden
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The commands that answer each example.
commands_for() {
    case $1 in
    train-* | failures-training-*) echo "train" ;;
    simulate-* | prefix-routing-* | heterogeneous-* | autoscaling-* | failures-serving-sim-* | \
        disaggregated-* | kv-offload-* | lora-*)
        echo "simulate estimate"
        ;;
    plan-search) echo "plan estimate fit cost" ;;
    fleet-*) echo "fleet estimate cost" ;;
    *) echo "estimate fit cost rack" ;;
    esac
}

run() { # name command example [args...]
    name=$1
    shift
    for fmt in txt json; do
        flag=""
        [ "$fmt" = json ] && flag="--json"
        if ! "$bin" "$@" $flag > "$work/$name.$fmt" 2> "$work/stderr"; then
            echo "golden: 'gpuplan $* $flag' failed:" >&2
            cat "$work/stderr" >&2
            exit 1
        fi
        sed -i "s|$root/|<root>/|g" "$work/$name.$fmt"
    done
}

for f in examples/*.yaml; do
    ex=$(basename "$f" .yaml)
    case $ex in sweep-*) continue ;; esac # sweep specs, not scenarios (tests/cli/sweep_test.cpp)
    for cmd in $(commands_for "$ex"); do
        case $cmd in
        simulate) run "$ex.$cmd" simulate "$f" --requests 300 ;;
        fleet) run "$ex.$cmd" plan "$f" --fleet ;;
        *) run "$ex.$cmd" "$cmd" "$f" ;;
        esac
    done
done

if [ "$mode" = --update ]; then
    rm -rf "$out"
    mkdir -p "$out"
    cp "$work"/*.txt "$work"/*.json "$out"/
    echo "golden: wrote $(ls "$out" | wc -l) files to $out"
    exit 0
fi
if ! diff -ru "$out" "$work" --exclude=stderr > "$work.diff" 2>&1; then
    head -n 200 "$work.diff"
    echo "golden: outputs differ from $out (diff above). If the change is intended, review it and" \
         "refresh with: scripts/golden.sh --update $bin" >&2
    rm -f "$work.diff"
    exit 1
fi
rm -f "$work.diff"
echo "golden: $(ls "$out" | wc -l) outputs match"
