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
[ $bad -eq 0 ] && echo "layers: ok"
exit $bad
