#!/usr/bin/env bash
# The import map has no upward arrow (docs/architecture.md): for each layer,
# the #include lines it must not have. Prints each offending line and exits
# 1; prints "layers: ok" otherwise.
#   tools/check-layers.sh [SOURCE_DIR]
set -uo pipefail
src=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$src" || exit 2
bad=0
# layer folder | include paths it may not use (an extended regex)
check() {
  local dir=$1 deny=$2 hits
  hits=$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($deny)" "$dir" \
           --include='*.h' --include='*.cpp' --include='*.cu' --include='*.cuh' --include='*.td' 2>/dev/null)
  if [ -n "$hits" ]; then
    echo "$hits" | sed "s|^|upward include in $dir: |"
    bad=1
  fi
}
mlir='mlir/|llvm/|purlin/Dialect/|purlin/Passes/|purlin/Plan/|purlin/Frontend/|purlin/Pipeline|purlin/Registration'
runtime='purlin/purlin\.h|purlin/runtime/|purlin/host/'
cuda='cuda_runtime|cuda\.h|cuda_'
atoms='common/sm/|host/target\.h|sm[0-9]+/target\.cuh'
check spec "$mlir|$runtime|$atoms|$cuda|nccl"
check dialects "purlin/Passes/|purlin/Plan/|purlin/Frontend/|purlin/Pipeline|purlin/Registration|$runtime|$atoms|$cuda"
check compiler "$runtime|$atoms|$cuda"
check atom-kernels "$mlir|$runtime"
check runtime "$mlir"
# The runtime's core is target-neutral: no CUDA, no atoms (a datapath plugs
# in through runtime/core's Target.h); the CUDA runtime's C API files know
# no datapath's atoms either (those live in runtime/cuda/<datapath>/).
check runtime/core "$mlir|$cuda|$atoms"
hits=$(grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($atoms)" runtime/cuda/*.h runtime/cuda/*.cpp 2>/dev/null)
if [ -n "$hits" ]; then
  echo "$hits" | sed "s|^|datapath include in the CUDA runtime's core: |"
  bad=1
fi
[ $bad -eq 0 ] && echo "layers: ok"
exit $bad
