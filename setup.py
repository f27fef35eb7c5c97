"""Builds tpusim's Python extension with the project's CMake build.

`pip install --no-build-isolation .` (offline, with Debian's setuptools):
CMake configures and builds the tpusim_python target and the extension it
makes is installed into the tpusim package. TPUSIM_BUILD_DIR=build reuses
the build scripts/build.sh made instead of building again.
"""

import os
import pathlib
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class CMakeBuild(build_ext):

    def build_extension(self, ext):
        source = pathlib.Path(__file__).parent.resolve()
        # TPUSIM_BUILD_DIR: reuse a configured build (scripts/build.sh's build/).
        build = pathlib.Path(os.environ.get("TPUSIM_BUILD_DIR") or
                             pathlib.Path(self.build_temp).resolve() / "cmake").resolve()
        subprocess.run(["cmake", "-S", str(source), "-B", str(build), "-G", "Ninja",
                        "-DPython3_EXECUTABLE=" + sys.executable], check=True)
        jobs = str(os.cpu_count() or 1)
        subprocess.run(["ninja", "-C", str(build), "-j", jobs, "tpusim_python"], check=True)
        built = next((build / "python" / "tpusim").glob("_tpusim*.so"))
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        self.copy_file(str(built), str(target))


setup(ext_modules=[Extension("tpusim._tpusim", sources=[])], cmdclass={"build_ext": CMakeBuild})
