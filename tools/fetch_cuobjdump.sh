#!/usr/bin/env bash
# cuobjdump and nvdisasm without a CUDA Toolkit install: NVIDIA ships both on PyPI. Fetches the
# pinned version into .tools/bin/ of the repository, where CMake looks for cuobjdump.
#
#     tools/fetch_cuobjdump.sh
#     export PATH="$PWD/.tools/bin:$PATH"   # cuobjdump runs the nvdisasm it finds on PATH
#     cmake -S . -B build                   # configure again: now the SASS tests run
#
# 13.5.37 reads nvcc 13.0's output (the oldest on PyPI is 13.2); the SASS rules are tested
# with it. Another version: CUOBJDUMP_VERSION=13.4.92 tools/fetch_cuobjdump.sh
set -euo pipefail
cd "$(dirname "$0")/.."
version=${CUOBJDUMP_VERSION:-13.5.37}
python3 -m pip download -q --no-deps -d .tools/wheels \
  "nvidia-cuda-cuobjdump==$version" "nvidia-cuda-nvdisasm==$version"
mkdir -p .tools/bin
for wheel in .tools/wheels/nvidia_cuda_cuobjdump-"$version"-*.whl \
             .tools/wheels/nvidia_cuda_nvdisasm-"$version"-*.whl; do
  # a wheel is a zip file; the programs are its bin/ entries
  python3 -c "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); [open('.tools/bin/' + n.rsplit('/', 1)[1], 'wb').write(z.read(n)) for n in z.namelist() if '/bin/' in n]" "$wheel"
done
chmod +x .tools/bin/cuobjdump .tools/bin/nvdisasm
echo "cuobjdump and nvdisasm $version in .tools/bin/: $(.tools/bin/cuobjdump --version | tail -1)"
