#!/usr/bin/env bash
# The main job: set up, then answer an offline demo question with the packaged local model, retrieval over the
# packaged corpus and the bundled MCP servers. Pass another question as arguments.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh demo  # only what the question needs (scripts/setup.d: the scripts tagged demo)
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
question=${*:-"Wo kann man das Razepato am besten beobachten?"}
exec .venv/bin/planwerk ask "$question"
