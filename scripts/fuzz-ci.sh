#!/bin/sh
# Builds the libFuzzer targets (docs/fuzzing.md) with clang in build-fuzz and runs each for a
# fixed time, with a fixed seed (the same inputs in the same order on every run), on corpora
# seeded from the shipped files; any finding (crash, sanitizer report,
# abort on an impossible figure, timeout) fails with the fuzzer's exit status.
# Usage: scripts/fuzz-ci.sh [SECONDS_PER_TARGET]   (default 60)
set -eu
secs=${1:-60}
cd "$(dirname "$0")/.."
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DGPUPLAN_FUZZ=ON \
  -DGPUPLAN_BUILD_TESTS=OFF -DGPUPLAN_BUILD_BENCH=OFF -DGPUPLAN_BUILD_GUI=OFF \
  -DGPUPLAN_BUILD_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
targets="fuzz_hwdb fuzz_scenario fuzz_hf_config fuzz_trace fuzz_simulate fuzz_observed fuzz_sweep"
# shellcheck disable=SC2086
cmake --build build-fuzz --target $targets
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
for d in hwdb scenario hf trace sim observed sweep; do mkdir -p "$corpus/$d"; done
cp hwdb/*/*.yaml tests/fixtures/malformed/*.yaml "$corpus/hwdb/"
cp examples/*.yaml "$corpus/scenario/"
cp tests/fixtures/hf/*.json "$corpus/hf/"
cp examples/traces/* "$corpus/trace/"
cp examples/*.yaml "$corpus/sim/" && rm "$corpus"/sim/sweep-*.yaml
for f in tests/fixtures/diagnose/*.prom tests/fixtures/diagnose/*.json tests/fixtures/diagnose/*.log; do
    printf '\000' | cat - "$f" >"$corpus/observed/$(basename "$f")"
done
cp examples/sweep-*.yaml "$corpus/sweep/"
run() { # target corpus [options]
    t=$1
    c=$2
    shift 2
    echo "fuzzing $t for $secs s"
    "./build-fuzz/tests/fuzz/$t" "$corpus/$c" -max_total_time="$secs" -seed=1 -timeout=10 "$@" \
        -artifact_prefix="build-fuzz/$t-" >"build-fuzz/$t.log" 2>&1 || {
        tail -40 "build-fuzz/$t.log"
        exit 1
    }
}
run fuzz_hwdb hwdb -max_len=65536
run fuzz_scenario scenario -max_len=65536
run fuzz_hf_config hf -max_len=65536
run fuzz_trace trace
run fuzz_simulate sim -rss_limit_mb=2048
run fuzz_observed observed
run fuzz_sweep sweep -rss_limit_mb=2048
echo "fuzzing: no finding in $secs s per target"
