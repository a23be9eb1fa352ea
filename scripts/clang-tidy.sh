#!/bin/sh
# Runs clang-tidy (14, as on Debian 12) with the checks of .clang-tidy on the core's sources and
# fails on any finding. Needs a configured build directory: CMakeLists.txt writes its
# compile_commands.json (CMAKE_EXPORT_COMPILE_COMMANDS). Generated headers are not needed.
#   scripts/clang-tidy.sh [BUILD_DIR [DIR...]]     defaults: build, and model hwdb plan sim
#   CLANG_TIDY_JOBS=N   parallel clang-tidy processes (default: the number of cores)
# A finding where the code is right is silenced on its line with `// NOLINT(check): reason`.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- model hwdb plan sim
if ! command -v clang-tidy >/dev/null 2>&1; then
    echo "clang-tidy: clang-tidy is not installed (apt-get install clang-tidy)" >&2
    exit 1
fi
if [ ! -f "$build/compile_commands.json" ]; then
    echo "clang-tidy: $build/compile_commands.json not found; configure first (cmake --preset release)" >&2
    exit 1
fi
jobs=${CLANG_TIDY_JOBS:-$(nproc 2>/dev/null || echo 2)}
set -f # the patterns below are for git, not the shell
pattern=""
for dir in "$@"; do
    pattern="$pattern $dir/*.cpp"
done
git ls-files -- $pattern | grep -v '^calib/cuda/' |
    xargs -r -P "$jobs" -n 1 clang-tidy -p "$build" --quiet --warnings-as-errors='*' \
        --extra-arg=-Wno-unknown-warning-option
echo "clang-tidy: no findings in $*"
