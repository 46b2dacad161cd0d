#!/usr/bin/env bash
# Installs what purlin needs to build, by Debian package name, when missing:
# LLVM/MLIR 22 (libmlir-22-dev, mlir-22-tools, llvm-22-dev, llvm-22-tools:
# lit and FileCheck live in /usr/lib/llvm-22/bin), CLI11, CMake, ninja, a C++
# compiler, python3 (with numpy, pip, setuptools and wheel: the Python
# package's tests install it from the clone and check it against numpy).
# The CUDA toolkit (nvcc) is expected on the machine; it is optional:
# without it the CUDA runtime and kernels are not built.
set -euo pipefail
pkgs=(libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools libcli11-dev
      cmake ninja-build g++ python3 python3-numpy python3-pip
      python3-setuptools python3-wheel)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi
echo "setup: installing ${missing[*]}"
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
echo "setup: done"
