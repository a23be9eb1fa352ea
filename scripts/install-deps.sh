#!/bin/sh
# Installs the Debian 12 packages gpuplan builds with, skipping what is already installed.
# Needs root (or sudo) only when something is missing. The Python packages are Debian's, for
# /usr/bin/python3, the interpreter the Python module is built and tested for (docs/python.md).
set -eu
PACKAGES="cmake ninja-build g++ make pkg-config
libyaml-cpp-dev libboost-program-options-dev libeigen3-dev libfmt-dev nlohmann-json3-dev
libgtest-dev libgmock-dev libbenchmark-dev
qt6-base-dev qt6-charts-dev libqt6opengl6-dev qt6-svg-dev
libopenmpi-dev openmpi-bin
python3-dev pybind11-dev python3-pybind11 python3-pytest python3-pandas python3-matplotlib
python3-nbclient python3-nbformat python3-ipykernel"

missing=""
for p in $PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
if [ -z "$missing" ]; then
  exit 0
fi
echo "gpuplan: installing missing Debian packages:$missing"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
