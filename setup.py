"""`pip install .`: builds gpuplan's Python module with CMake (docs/python.md) and installs the
package python/gpuplan with it. The C++ dependencies come from scripts/install-deps.sh; the
module is built for the interpreter that runs pip."""

import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        subprocess.check_call([
            "cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
            "-DGPUPLAN_BUILD_GUI=OFF", "-DGPUPLAN_BUILD_TESTS=OFF", "-DGPUPLAN_BUILD_BENCH=OFF",
            "-DGPUPLAN_BUILD_CUDA=OFF", f"-DGPUPLAN_PYTHON={sys.executable}",
            f"-DPython3_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", build, "--target", "gpuplan_python",
                               "-j", str(os.cpu_count() or 2)])
        built = glob.glob(os.path.join(build, "python", "gpuplan", "_core*.so"))
        if not built:
            raise RuntimeError("the CMake build made no gpuplan/_core module")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built[0], target)


setup(
    name="gpuplan",
    version="0.1.0",
    description="LLM capacity planner for GPUs: the gpuplan commands from Python",
    packages=["gpuplan"],
    package_dir={"": "python"},
    ext_modules=[CMakeExtension("gpuplan._core")],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
    extras_require={"frames": ["pandas"], "plots": ["matplotlib", "pandas"]},
    zip_safe=False,
    # Not build/: that is the CMake build of `make run`.
    options={"build": {"build_base": "build-python"}},
)
