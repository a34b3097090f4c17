#!/usr/bin/env bash
# llama.cpp in planwerk's own virtualenv (the in-process CPU backend, planwerk/models/llama_cpp.py), from the build
# that 30-llama-server.sh already made in .llama-venv/: llama.cpp is compiled once. The installed distribution there
# is packed into a wheel (its files as RECORD lists them, without the C headers and CMake files) under
# .llama-venv/wheels/ and pip-installed here with its pure-Python dependencies (diskcache, ...).
# Without it planwerk runs the packaged models on transformers (slower; everything works). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."

LLAMA_CPP_PYTHON_VERSION=0.3.36
SOURCE=${PLANWERK_LLAMA_VENV:-.llama-venv}
VENV=${PLANWERK_VENV:-.venv}
WHEELS=${PLANWERK_LLAMA_WHEELS:-$SOURCE/wheels}

if "$VENV/bin/python" - "$LLAMA_CPP_PYTHON_VERSION" <<'EOF' >/dev/null 2>&1
import sys
import llama_cpp
sys.exit(0 if llama_cpp.__version__ == sys.argv[1] else 1)
EOF
then
  echo "  llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION already in $VENV (in-process llama.cpp backend)"
  exit 0
fi
site=$("$SOURCE/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])' 2>/dev/null || true)
if [ -z "$site" ] || [ ! -d "$site/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.dist-info" ]; then
  echo "  skipped the in-process llama.cpp backend: no llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION build in $SOURCE"
  echo "  (30-llama-server.sh makes it); planwerk runs the packaged models on transformers (slower) meanwhile"
  exit 0
fi
echo "  packing the llama.cpp build of $SOURCE into a wheel (no second compile) …"
mkdir -p "$WHEELS"
wheel=$("$VENV/bin/python" - "$site" "$LLAMA_CPP_PYTHON_VERSION" "$WHEELS" <<'EOF'
"""Pack an installed distribution back into a wheel: the files its RECORD lists under the package and its
dist-info, a fresh RECORD with sha256 digests (PEP 376/427)."""
import base64
import csv
import hashlib
import io
import sys
import zipfile
from pathlib import Path

site, version, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
info = f"llama_cpp_python-{version}.dist-info"
wanted = ("llama_cpp/", info + "/")
skip = {info + "/RECORD", info + "/INSTALLER", info + "/REQUESTED", info + "/direct_url.json"}
with open(site / info / "RECORD", newline="") as handle:
    paths = [row[0] for row in csv.reader(handle) if row]
paths = [p for p in paths if p.startswith(wanted) and p not in skip and "__pycache__" not in p]
tag = next(line.split(": ", 1)[1].strip() for line in (site / info / "WHEEL").read_text().splitlines()
           if line.startswith("Tag: "))
target = out / f"llama_cpp_python-{version}-{tag}.whl"
record = io.StringIO()
writer = csv.writer(record, lineterminator="\n")
partial = target.with_suffix(".partial")
with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
    for path in paths:
        data = (site / path).read_bytes()
        archive.writestr(path, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        writer.writerow((path, f"sha256={digest}", len(data)))
    writer.writerow((info + "/RECORD", "", ""))
    archive.writestr(info + "/RECORD", record.getvalue())
partial.rename(target)
print(target)
EOF
)
"$VENV/bin/python" -m pip install --disable-pip-version-check -q "$wheel"
echo "  llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION installed in $VENV from $wheel (in-process llama.cpp backend)"
