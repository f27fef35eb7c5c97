#!/usr/bin/env bash
# Installs tpusim's build and test dependencies from Debian's packages,
# skipping the ones already present. Needs root (or sudo) only if any is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache
  libdnnl-dev ocl-icd-opencl-dev   # Debian's dnnl CMake config requires OpenCL; the
                                   # package only recommends it
  libfmt-dev nlohmann-json3-dev libcli11-dev libtomlplusplus-dev libssl-dev
  libopenmpi-dev openmpi-bin   # mpirun -np K tpusim run: a slice over K processes
  libgtest-dev libgmock-dev libbenchmark-dev
  pkgconf liblapacke-dev libopenblas-dev   # the LAPACK custom calls (LAPACKE, CBLAS)
  clang libclang-rt-dev   # libFuzzer and sanitizer runtimes
  libomp-dev              # OpenMP for the ops' loops when clang builds them (g++ has libgomp)
  python3-numpy           # test oracle for .npy files
  pybind11-dev python3-dev   # the Python module (import tpusim)
  libfftw3-dev            # stablehlo.fft (GPL-2+)
  libcpp-httplib-dev libsqlite3-dev   # tpusim cloud: the API server, its state
  python3-scipy           # test oracle for the LAPACK custom calls (tests/lapack_test.py)
  curl                    # docs/cloud.md's REST call, run by tests/docs_test.py
  libonnx-dev libprotobuf-dev   # the ONNX front end: onnx.proto, its checker
  libonnx-testdata python3-onnx  # ONNX's backend test suite and its reader
                                 # (scripts/onnx_conformance.py); python3-torch and
  python3-torch python3-torchvision   # torchvision: PyTorch as a client (tests/onnx_pytorch_test.py)
  chromium                # tests/html_report_test.py loads the HTML reports headless
  python3-googleapi python3-google-auth python3-google-auth-httplib2   # Google's Python client
                          # of the Cloud TPU API, against tpusim cloud (tests/cloud_clients)
)
# Node and npm for the test-only Node client (scripts/test.sh installs it
# with npm ci); Debian's, unless a Node is already there.
command -v npm >/dev/null || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing: ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
