#!/usr/bin/env bash
# NESTFUL planner runs in N processes side by side, then one report per split over all of their results.
#
#   bash scripts/bench-nestful.sh [SPLITS] [SHARDS] [MODEL] [OUT]
#   bash scripts/bench-nestful.sh "test dev" 7 default docs/results     # what BENCHMARKS.md §2 reports
#
# Each process loads its own copy of the model (the 0.5B default takes about 1.5 GB on a GPU in bf16), so one GPU
# serves many; on a 2-core CPU use 1-2 shards. Every sample's line is written as soon as it is scored; running
# the script again resumes each shard where it stopped. Reports: OUT/nestful_<split>.json (the last line of
# `python -m benchmarks nestful --json` over the merged results, which loads no model).
set -euo pipefail
cd "$(dirname "$0")/.."
SPLITS=${1:-"test dev"}
SHARDS=${2:-2}
MODEL=${3:-default}
OUT=${4:-bench-results}
PLANWERK=${PLANWERK:-.venv/bin/planwerk}
mkdir -p "$OUT/shards"
# one torch thread per process: N processes share the cores (the model itself runs on the GPU where there is one)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} TOKENIZERS_PARALLELISM=false

pids=()
for split in $SPLITS; do
  for ((k = 0; k < SHARDS; k++)); do
    part="$OUT/shards/${split}_${k}"
    "$PLANWERK" bench nestful --split "$split" --model "$MODEL" --shard "$k/$SHARDS" \
      --results "$part.jsonl" --resume --json >"$part.out" 2>"$part.err" &
    pids+=($!)
  done
done
echo "bench-nestful: ${#pids[@]} processes ($SPLITS × $SHARDS shards, model $MODEL); progress in $OUT/shards/*.err"
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=$((failed + 1)); done
# a report over incomplete results would ask the missing samples in one process: stop here instead
[ "$failed" -eq 0 ] || { echo "bench-nestful: $failed shard processes failed; see $OUT/shards/*.err" >&2; exit 1; }
for split in $SPLITS; do
  cat "$OUT"/shards/"${split}"_*.jsonl >"$OUT/nestful_${split}.jsonl"
  "$PLANWERK" bench nestful --split "$split" --model "$MODEL" --results "$OUT/nestful_${split}.jsonl" --resume --json \
    2>/dev/null | tail -n 1 >"$OUT/nestful_${split}.json"
  echo "bench-nestful: $split: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); \
print(f\"{d['correct']}/{d['samples']} correct, {d['valid_plans']} valid plans\")" "$OUT/nestful_${split}.json")"
done
