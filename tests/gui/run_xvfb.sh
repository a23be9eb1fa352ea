#!/bin/sh
# Runs a command (a desktop-app test) on a virtual X server, as a person's desktop would run
# the app: Xvfb with one 1542x940 screen, Qt's xcb platform. Exits 77 (ctest's "skipped") with
# a message when Xvfb is not installed (Debian/Ubuntu: apt-get install xvfb xdotool).
#   tests/gui/run_xvfb.sh COMMAND [ARGS...]
set -u
if ! command -v Xvfb >/dev/null 2>&1; then
    echo "skipped: Xvfb is not installed (apt-get install xvfb xdotool); the real-window tests need an X server"
    exit 77
fi
size="${GPUPLAN_XVFB_SCREEN:-1542x940x24}"
# The first display number without a server (its lock file).
n=90
while [ -e "/tmp/.X$n-lock" ] || [ -e "/tmp/.X11-unix/X$n" ]; do
    n=$((n + 1))
    if [ "$n" -gt 200 ]; then
        echo "no free X display number in 90..200" >&2
        exit 1
    fi
done
Xvfb ":$n" -screen 0 "$size" -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
trap 'kill "$xvfb" 2>/dev/null; wait "$xvfb" 2>/dev/null' EXIT INT TERM
i=0
while [ ! -e "/tmp/.X11-unix/X$n" ]; do
    i=$((i + 1))
    if [ "$i" -gt 100 ] || ! kill -0 "$xvfb" 2>/dev/null; then
        echo "Xvfb :$n did not start" >&2
        exit 1
    fi
    sleep 0.1
done
DISPLAY=":$n" QT_QPA_PLATFORM=xcb "$@"
