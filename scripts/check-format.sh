#!/bin/sh
# Fails when a C++ or CUDA source is not formatted as .clang-format says (clang-format 14, as on
# Debian 12). Fix with: git ls-files '*.cpp' '*.hpp' '*.cu' | xargs clang-format -i
set -eu
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null 2>&1; then
    echo "check-format: clang-format is not installed (apt-get install clang-format)" >&2
    exit 1
fi
git ls-files '*.cpp' '*.hpp' '*.cu' '*.h' | xargs clang-format --dry-run -Werror
echo "check-format: every source is formatted"
