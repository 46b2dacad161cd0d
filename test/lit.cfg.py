# -*- Python -*-
# lit configuration of purlin's tests (`ninja check-purlin`, or
# `lit build/test -v`).
import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "purlin"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".purlin", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.purlin_obj_root, "test")

llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])
llvm_config.use_default_substitutions()  # FileCheck, not, count, split-file

# The host runners' grids (purlin-host-run --sample): a deterministic 1 in 3
# of each grid's cases, chosen by a hash of the case, so that the suite fits
# CI's 20 minutes on 2 cores; PURLIN_TEST_LONG=1 runs every case (the full
# sweep, about 30 minutes there). PURLIN_HOST_SAMPLE=N sets another rate.
if os.environ.get("PURLIN_TEST_LONG", "0") not in ("", "0"):
    config.environment["PURLIN_HOST_SAMPLE"] = "1"
else:
    config.environment["PURLIN_HOST_SAMPLE"] = os.environ.get("PURLIN_HOST_SAMPLE", "3")

# %examples: the standard and user-defined collectives; %python: python3.
config.substitutions.append(
    ("%examples", os.path.join(config.purlin_src_root, "examples")))
# %purlin_src, %purlin_obj: the source and build trees; %unit: the unit test
# executables (test/unit); %cxx: the host C++ compiler the build uses.
config.substitutions.append(("%purlin_src", config.purlin_src_root))
config.substitutions.append(("%purlin_obj", config.purlin_obj_root))
config.substitutions.append(
    ("%unit", os.path.join(config.purlin_obj_root, "test", "unit")))
config.substitutions.append(
    ("%cxx", getattr(config, "cxx_compiler", "") or "c++"))
# The Python that runs %pkg_python: CMake's find, unless it lacks numpy and
# wheel (the Python package's tests need them) and another python3 has
# them. A python3 earlier on PATH than the system's (pyenv) was picked
# without numpy, and the package's tests were UNSUPPORTED in CI unseen;
# tools/setup.sh installs python3-numpy for the system's /usr/bin/python3.
def _has_pkg_deps(exe):
    try:
        subprocess.run([exe, "-c", "import numpy, wheel"], check=True,
                       timeout=60, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        return True
    except (OSError, subprocess.SubprocessError):
        return False

python_exe = config.python_executable
python_pkg = _has_pkg_deps(python_exe)
if not python_pkg:
    for cand in ["/usr/bin/python3", "/usr/local/bin/python3"]:
        if os.path.exists(cand) and _has_pkg_deps(cand):
            python_exe, python_pkg = cand, True
            break

tool_dirs = [config.purlin_tools_dir, config.llvm_tools_dir]
tools = [
    "purlinc",
    "purlin-opt",
    "split-file",
    "not",
    "count",
]
llvm_config.add_tool_substitutions(tools, tool_dirs)
# %pkg_python: the chosen path as it is. (%python is LLVM's: the python
# that runs lit, which `ninja check-purlin` starts with CMake's find, here
# pyenv's: it came first among the substitutions and won.)
config.substitutions.append(("%pkg_python", '"%s"' % python_exe))

# %host_runner GEN OUT: builds a host-target runner from purlinc's outputs.
config.substitutions.append(
    ("%host_runner", "bash %s %s" % (
        os.path.join(config.purlin_src_root, "tools", "host-runner.sh"),
        config.purlin_obj_root)))

# The GPU test binary, where the CUDA runtime was built (nvcc present, and
# the build not configured with PURLIN_CUDA=OFF).
cuda_on = getattr(config, "purlin_cuda", "ON").upper() in ("ON", "TRUE", "1", "YES")
gpu_test = os.path.join(config.purlin_obj_root, "test", "gpu", "purlin-gpu-test")
if cuda_on and os.path.exists(gpu_test):
    config.available_features.add("cuda-build")
    config.substitutions.append(("%gpu_test", gpu_test))

# `REQUIRES: cuda` tests run only where a GPU answers.
try:
    subprocess.run(["nvidia-smi", "-L"], check=True, timeout=30,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    config.available_features.add("cuda")
except (OSError, subprocess.SubprocessError):
    pass

# `REQUIRES: nvcc` tests compile host code with nvcc (no GPU needed); not
# when the build was configured without CUDA (PURLIN_CUDA=OFF).
nvcc = shutil.which("nvcc") if cuda_on else None
for cand in [os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"),
                          "bin", "nvcc"), "/usr/local/cuda/bin/nvcc"]:
    if cuda_on and not nvcc and os.path.exists(cand):
        nvcc = cand
if nvcc:
    config.available_features.add("nvcc")
    config.substitutions.append(("%nvcc", nvcc))

# `REQUIRES: python-pkg`: the Python package's tests, where numpy and wheel
# are installed (tools/setup.sh installs them from PyPI).
if python_pkg:
    config.available_features.add("python-pkg")
else:
    lit_config.note("no python3 with numpy and wheel: the Python package's "
                    "tests (REQUIRES: python-pkg) are UNSUPPORTED")
