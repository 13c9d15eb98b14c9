#!/usr/bin/env bash
# Install torch into the given Python's environment before the project, so that pip never resolves
# the project's torch range to a multi-GB CUDA build on a machine without a GPU.
#   no torch + no visible GPU -> torch==2.13.0 (on these machines, the CPU build that lies on disk)
#   no torch + a visible GPU  -> the default PyPI build (CUDA)
#   torch already present     -> nothing
set -euo pipefail
PY="${1:?usage: install_torch.sh PYTHON}"
if "$PY" -c "import torch" 2>/dev/null; then
  exit 0
fi
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  echo "install_torch: GPU visible, installing the CUDA build of torch"
  "$PY" -m pip install "torch>=2.2,<3"
else
  echo "install_torch: no GPU visible, installing the CPU build torch==2.13.0"
  "$PY" -m pip install "torch==2.13.0"
fi
