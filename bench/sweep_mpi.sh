#!/bin/sh
# Benchmark of `gpuplan sweep` on one process and on MPI ranks (docs/sweep.md, "MPI"): a sweep of
# 10,000 small simulate points (llama-3.1-8b on one H100 SXM, 20 requests each, closed loop of 1
# to 100 sequences x 100 seeds), timed on 1 process, on `mpirun -np 1 --mpi` (the MPI path's own
# overhead) and on `mpirun -np 2 --mpi`. Not a test: run it by hand on a quiet machine.
#   bench/sweep_mpi.sh [BUILD_DIR] [POINTS_PER_AXIS]
set -eu
build=${1:-build}
n=${2:-100}
gpuplan="$build/cli/gpuplan"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/spec.yaml" <<SPEC
id: bench-mpi
command: simulate
base:
  schema: 1
  name: bench
  model: llama-3.1-8b
  hardware: {accelerator: h100-sxm, count: 1}
  engine: {kind: vllm, max_model_len: 4096}
  workload: {input_tokens: 512, output_tokens: 64, requests: 20}
axes:
  - key: workload.concurrency
    range: {start: 1, stop: $n, step: 1}
  - key: seed
    range: {start: 1, stop: $n, step: 1}
SPEC
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() {
  label=$1; shift
  start=$(date +%s.%N)
  "$@" > "$dir/log" 2>&1
  end=$(date +%s.%N)
  printf '%-28s %8.2f s  %s\n' "$label" "$(echo "$end - $start" | bc)" "$(grep -o 'ran on.*' "$dir/log" || true)"
}
run "1 process" "$gpuplan" sweep "$dir/spec.yaml" -o "$dir/one.csv"
run "mpirun -np 1 --mpi" mpirun --oversubscribe -np 1 "$gpuplan" sweep "$dir/spec.yaml" -o "$dir/mpi1.csv" --mpi
run "mpirun -np 2 --mpi" mpirun --oversubscribe -np 2 "$gpuplan" sweep "$dir/spec.yaml" -o "$dir/mpi2.csv" --mpi
cmp "$dir/one.csv" "$dir/mpi2.csv" && cmp "$dir/one.csv" "$dir/mpi1.csv" && echo "tables byte-identical"
echo "points: $(($(wc -l < "$dir/one.csv") - 1))"
