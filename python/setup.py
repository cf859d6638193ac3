"""setup.py - builds libfuseplan.so.1 (CMake, the source tree above) into the package when `make
python` has not put it there, so that `pip install --no-build-isolation ./python` is one command.
The metadata is pyproject.toml's."""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.path.join(HERE, "fuseplan", "libfuseplan.so.1")


class build_with_library(build_py):
    def run(self):
        if not os.path.exists(LIB):
            root, build = os.path.dirname(HERE), os.path.join(os.path.dirname(HERE), "build")
            subprocess.check_call(["cmake", "-S", root, "-B", build, "-DCMAKE_BUILD_TYPE=Release"])
            subprocess.check_call(["cmake", "--build", build, "--target", "fuseplan_lib", "-j",
                                   str(os.cpu_count() or 2)])
            shutil.copy(os.path.join(build, "libfuseplan.so.1"), LIB)
        super().run()


setup(cmdclass={"build_py": build_with_library})
