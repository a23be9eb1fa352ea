#!/bin/sh
# Registers the Python module built in BUILD/python with Debian's interpreter (/usr/bin/python3,
# the one it is built for: docs/python.md), so that `python3 -c "import gpuplan"` works after
# `make run` without setting PYTHONPATH: one .pth file naming the build folder, in the
# interpreter's site-packages for local installs (/usr/local/lib/python3.X/dist-packages).
# Re-running rewrites it (the last checkout built wins). Skipped, with a note, when the module was
# not built or the folder is not writable.
# Usage: scripts/python-path.sh BUILD
set -eu
build=$(cd "$1" && pwd)
[ -d "$build/python/gpuplan" ] || exit 0
[ -x /usr/bin/python3 ] || exit 0
site=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
if mkdir -p "$site" 2>/dev/null && printf '%s\n' "$build/python" >"$site/gpuplan-build.pth" 2>/dev/null; then
    :
else
    echo "note: could not write $site/gpuplan-build.pth; use: export PYTHONPATH=$build/python" >&2
fi
