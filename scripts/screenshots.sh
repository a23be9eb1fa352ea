#!/bin/sh
# Refreshes the README's screenshots, docs/images/gui-*.png: the real gpuplan-gui window at its
# default size (1500 x 940) on each tab with an example scenario, grabbed with QWidget::grab
# (tests/gui/screenshots.cpp). On a virtual X server (Xvfb, Qt's xcb platform, screen 1542 x 940)
# when Xvfb is installed, else on Qt's offscreen platform.
#   scripts/screenshots.sh [BUILD_DIR]     (default: build; configured with GPUPLAN_BUILD_GUI=ON)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
nice cmake --build "$build" -j1 --target gpuplan_gui_screenshots
exe="$build/tests/gui/gpuplan_gui_screenshots"
if command -v Xvfb >/dev/null 2>&1; then
    "$root/tests/gui/run_xvfb.sh" "$exe" "$root/docs/images"
else
    echo "Xvfb not installed: drawing on Qt's offscreen platform" >&2
    QT_QPA_PLATFORM=offscreen "$exe" "$root/docs/images"
fi
