#!/usr/bin/env bash
# The one prepared script for a GPU machine (calib/cuda/README.md): builds gpuplan-calib,
# runs it, runs calib/torch_profile.py when it and PyTorch are there, and leaves everything in
# $OUT. Every step has a time guard so the whole script ends within GPUPLAN_DEVICE_LIMIT_S
# (default 540 s = 9 minutes), counting the build.
#
#   OUT=/some/dir scripts/device-calibrate.sh        # run from the repository root
#
# Environment: OUT (results folder, default ./device-out), GPUPLAN_DEVICE_LIMIT_S (seconds),
# GPUPLAN_GPU (hwdb name for the points, e.g. h200-sxm; default: the CUDA device name, which
# `gpuplan calib fit` resolves through the hwdb aliases), GPUPLAN_LINK (hwdb link name for
# collective points), GPUPLAN_CALIB_BIN (a prebuilt gpuplan-calib to use instead of building).
set -u -o pipefail

START=$(date +%s)
LIMIT=${GPUPLAN_DEVICE_LIMIT_S:-540}
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
LOG="$OUT/device-calibrate.log"
: > "$LOG"

elapsed() { echo $(( $(date +%s) - START )); }
left() { echo $(( LIMIT - $(elapsed) )); }
log() { echo "[device-calibrate +$(elapsed)s] $*" | tee -a "$LOG" >&2; }

# ---------------------------------------------------------------- environment
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "repo commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  timeout 15 nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total,power.limit,clocks.max.sm,clocks.max.mem --format=csv 2>&1
  timeout 10 nvidia-smi topo -m 2>&1
  command -v nvcc >/dev/null && nvcc --version | tail -2
  cmake --version 2>&1 | head -1
} > "$OUT/environment.txt" 2>&1
log "environment recorded in $OUT/environment.txt; limit ${LIMIT}s"

NVCC=$(command -v nvcc || true)
[ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
CUDA_HOME=${CUDA_HOME:-$( [ -n "$NVCC" ] && dirname "$(dirname "$NVCC")" || echo /usr/local/cuda )}

# ---------------------------------------------------------------- binary
# A binary runs here when its shared libraries resolve and --help works (that needs no GPU).
runs_here() { [ -x "$1" ] && ! ldd "$1" 2>/dev/null | grep -q "not found" && timeout 10 "$1" --help >/dev/null 2>&1; }

BIN=""
for candidate in "${GPUPLAN_CALIB_BIN:-}" build-cuda/calib/cuda/gpuplan-calib; do
  if [ -n "$candidate" ] && runs_here "$candidate"; then BIN=$candidate; log "using prebuilt $BIN"; break; fi
done

if [ -z "$BIN" ] && [ -n "$NVCC" ] && command -v cmake >/dev/null; then
  GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
  log "configuring (Release, CUDA on) in build-device"
  if timeout $(( $(left) > 120 ? 90 : 30 )) cmake -S . -B build-device "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
       -DGPUPLAN_BUILD_CUDA=ON -DCMAKE_CUDA_COMPILER="$NVCC" -DGPUPLAN_BUILD_TESTS=OFF \
       -DGPUPLAN_BUILD_BENCH=OFF -DGPUPLAN_BUILD_GUI=OFF > "$OUT/cmake-configure.log" 2>&1; then
    log "building gpuplan-calib"
    if timeout 200 cmake --build build-device -j "$(nproc)" --target gpuplan-calib > "$OUT/cmake-build.log" 2>&1 \
       && runs_here build-device/calib/cuda/gpuplan-calib; then
      BIN=build-device/calib/cuda/gpuplan-calib
    else
      log "cmake build failed (see cmake-build.log)"
    fi
  else
    log "cmake configure failed (see cmake-configure.log; the full project needs yaml-cpp, Eigen, fmt, Boost)"
  fi
fi

if [ -z "$BIN" ] && [ -n "$NVCC" ]; then
  # gpuplan-calib links no gpuplan library, so nvcc and g++ alone can build it.
  log "building gpuplan-calib directly with nvcc"
  D=build-device-direct; mkdir -p "$D"
  # The architectures of calib/cuda/CMakeLists.txt, with PTX for newer GPUs.
  ARCH=("--generate-code=arch=compute_80,code=sm_80" "--generate-code=arch=compute_89,code=sm_89"
        "--generate-code=arch=compute_90,code=[compute_90,sm_90]")
  if timeout 120 "$NVCC" -O3 -std=c++17 "${ARCH[@]}" -I. -c calib/cuda/kernels.cu -o "$D/kernels.o" > "$OUT/nvcc-build.log" 2>&1 \
     && timeout 150 "${CXX:-g++}" -O2 -std=c++20 -I. -I"$CUDA_HOME/include" calib/cuda/attention_bench.cpp \
          calib/cuda/calibrate.cpp calib/cuda/cuda_util.cpp calib/cuda/gemm_bench.cpp calib/cuda/launch_bench.cpp \
          calib/cuda/main.cpp calib/cuda/memory_bench.cpp calib/cuda/nccl_bench.cpp calib/cuda/nvml_monitor.cpp \
          calib/cuda/options.cpp calib/cuda/report.cpp hwdb/file_io.cpp calib/cuda/session.cpp calib/cuda/timer.cpp "$D/kernels.o" \
          -L"$CUDA_HOME/lib64" -Wl,-rpath,"$CUDA_HOME/lib64" -lcublasLt -lcudart -ldl -lpthread \
          -o "$D/gpuplan-calib" >> "$OUT/nvcc-build.log" 2>&1 \
     && runs_here "$D/gpuplan-calib"; then
    BIN=$D/gpuplan-calib
  else
    log "direct nvcc build failed (see nvcc-build.log)"
  fi
fi

if [ -z "$BIN" ]; then
  log "no runnable gpuplan-calib; giving up"
  exit 1
fi

# ---------------------------------------------------------------- measurements
HAVE_TORCH=0
if [ -f calib/torch_profile.py ] && timeout 30 python3 -c "import torch; assert torch.cuda.is_available()" >/dev/null 2>&1; then
  HAVE_TORCH=1
fi
RESERVE=$(( HAVE_TORCH ? 150 : 15 ))   # seconds kept for the torch profile and the copy
BUDGET=$(( $(left) - RESERVE ))
ARGS=(--out "$OUT/gpuplan-calib.yaml")
[ -n "${GPUPLAN_GPU:-}" ] && ARGS+=(--gpu-name "$GPUPLAN_GPU")
[ -n "${GPUPLAN_LINK:-}" ] && ARGS+=(--link "$GPUPLAN_LINK")
if [ "$BUDGET" -ge 300 ]; then
  # gpuplan-calib starts no new point after --max-seconds; the rest covers its last point,
  # writing the files and freeing memory.
  MODE=(--max-seconds $(( BUDGET - 45 < 450 ? BUDGET - 45 : 450 )))
elif [ "$BUDGET" -ge 60 ]; then
  MODE=(--quick --max-seconds $(( BUDGET - 30 < 110 ? BUDGET - 30 : 110 )))
else
  log "only ${BUDGET}s left for measuring; skipping gpuplan-calib"
  MODE=()
fi
if [ ${#MODE[@]} -gt 0 ]; then
  log "gpuplan-calib ${MODE[*]} ${ARGS[*]} (guard ${BUDGET}s)"
  timeout -k 10 "$BUDGET" "$BIN" "${MODE[@]}" "${ARGS[@]}" > "$OUT/gpuplan-calib.log" 2>&1
  RC=$?
  log "gpuplan-calib exit code $RC (0 ok, 1 a section failed, 3 no GPU, 124 timed out)"
fi

if [ "$HAVE_TORCH" = 1 ] && [ "$(left)" -gt 40 ]; then
  T=$(( $(left) - 15 )); [ "$T" -gt 150 ] && T=150
  HELP=$(timeout 20 python3 calib/torch_profile.py --help 2>&1 || true)
  TARGS=()
  if grep -q -- "--out\b" <<< "$HELP"; then TARGS=(--out "$OUT/torch-profile.csv")
  elif grep -q -- "--output" <<< "$HELP"; then TARGS=(--output "$OUT/torch-profile.csv")
  elif grep -q -- "-o " <<< "$HELP"; then TARGS=(-o "$OUT/torch-profile.csv"); fi
  log "torch profile (guard ${T}s): python3 calib/torch_profile.py ${TARGS[*]}"
  if [ ${#TARGS[@]} -gt 0 ]; then
    timeout -k 5 "$T" python3 calib/torch_profile.py "${TARGS[@]}" > "$OUT/torch-profile.log" 2>&1
  else
    timeout -k 5 "$T" python3 calib/torch_profile.py > "$OUT/torch-profile.csv" 2> "$OUT/torch-profile.log"
  fi
  log "torch profile exit code $?"
elif [ "$HAVE_TORCH" = 0 ]; then
  log "torch profile skipped (calib/torch_profile.py or a CUDA PyTorch is missing)"
fi

log "done in $(elapsed)s; files in $OUT:"
find "$OUT" -maxdepth 1 -type f -printf '%10s  %f\n' | sort -k2 | tee -a "$LOG" >&2
# The summary gpuplan-calib printed, for the caller's log tail.
[ -f "$OUT/gpuplan-calib.log" ] && grep -A40 "^gpuplan-calib: wrote" "$OUT/gpuplan-calib.log" >&2
exit 0
