# -*- Python -*-
# lit configuration of the mxfp4 regression tests.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "MXFP4"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".py"]
config.excludes = ["Inputs", "lib", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.mxfp4_obj_root, "test")

# Tests of the AVX-512 BF16 kernels run only where the host can execute them.
try:
    with open("/proc/cpuinfo") as cpuinfo:
        if " avx512_bf16" in cpuinfo.read():
            config.available_features.add("avx512bf16")
except OSError:
    pass

# The benchmark is built only where OpenBLAS is installed.
if os.path.exists(os.path.join(config.mxfp4_obj_root, "bin", "mxfp4-bench")):
    config.available_features.add("mxfp4-bench")

# PyTorch (Debian python3-torch) for the autograd references and the frontend.
try:
    import subprocess
    if subprocess.run([config.python_executable, "-c", "import torch"],
                      capture_output=True, timeout=120).returncode == 0:
        config.available_features.add("torch")
except Exception:
    pass

# An MI350X/MI355X for the gfx950 hardware suite.
if os.environ.get("MXFP4_GFX950") == "1":
    config.available_features.add("gfx950")
else:
    try:
        import shutil as _shutil
        if _shutil.which("rocminfo") and "gfx950" in subprocess.run(
                ["rocminfo"], capture_output=True, text=True,
                timeout=60).stdout:
            config.available_features.add("gfx950")
    except Exception:
        pass

# The CUDA toolkit (ptxas, libdevice) for the sm_90a compile tests.
if os.access(os.path.join(os.environ.get("MXFP4_CUDA_PATH", "/usr/local/cuda"),
                          "bin", "ptxas"), os.X_OK):
    config.available_features.add("cuda")

# The Python scripts of the tests import the built package `mxfp4` and the
# shared helpers by name, from this PYTHONPATH: test/Integration/lib (the
# NumPy reference, the mxfp4-run harness, the PyTorch Llama, ...),
# test/Recipes/Inputs (the graph generator) and tools/mxfp4-bench (the
# PyTorch benchmark model).
python_packages = os.path.join(config.mxfp4_obj_root, "python_packages")
llvm_config.with_environment(
    "PYTHONPATH",
    [python_packages,
     os.path.join(config.mxfp4_src_root, "test", "Integration", "lib"),
     os.path.join(config.mxfp4_src_root, "test", "Recipes", "Inputs"),
     os.path.join(config.mxfp4_src_root, "tools", "mxfp4-bench")],
    append_path=True)
if os.path.isdir(os.path.join(python_packages, "mxfp4")):
    config.available_features.add("python-bindings")

# The cl100k parity test needs OpenAI's cl100k_base.tiktoken, which is not
# committed: point MXFP4_CL100K at a copy (`mxfp4-run data --tokenizer=cl100k`
# puts one in ~/.cache/mxfp4/tokenizers/).
cl100k = os.environ.get("MXFP4_CL100K")
if cl100k and os.path.isfile(cl100k):
    config.available_features.add("cl100k")
    config.substitutions.append(("%cl100k", cl100k))

# The download tests run curl on file:// URLs (no network).
import shutil
if shutil.which("curl"):
    config.available_features.add("curl")

config.substitutions.append(("%mxfp4_src_root", config.mxfp4_src_root))
config.substitutions.append(("%mxfp4_obj_root", config.mxfp4_obj_root))

# A capture cannot leak across CHECK-LABEL boundaries.
config.environment["FILECHECK_OPTS"] = "-enable-var-scope"

# FileCheck, not and count live in LLVM's tool directory, not on PATH.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.use_default_substitutions()
llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])

tool_dirs = [os.path.join(config.mxfp4_obj_root, "bin"), config.llvm_tools_dir]
# --param runtime_tools=DIR: the LLVM-free runtimes' tools from another build
# of runtime/ (scripts/sanitize.sh: under ASan and UBSan), with the build's
# emulated HIP library, which they find beside themselves otherwise.
runtime_tools = lit_config.params.get("runtime_tools")
runtimes = ["mxfp4-cuda-run", "mxfp4-hip-run"]
if runtime_tools:
    llvm_config.add_tool_substitutions(runtimes, [runtime_tools])
    config.environment["MXFP4_EMULATED_HIP"] = os.path.join(
        config.mxfp4_obj_root, "lib", "libmxfp4-emulated-hip.so")
    for name in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
        if name in os.environ:
            config.environment[name] = os.environ[name]
    runtimes = []
llvm_config.add_tool_substitutions(
    [
        "mxfp4-opt",
        "mxfp4-run",
    ]
    + runtimes
    + [
        ToolSubst("mxfp4-bench", unresolved="ignore"),
        "mlir-opt",
        ToolSubst("%PYTHON", config.python_executable, unresolved="ignore"),
    ],
    tool_dirs,
)
