#!/usr/bin/env bash
# Larger-batch proposer fine-tuning on a GPU machine (--device auto picks cuda when torch sees one).
# Usage: evolve/train/gpu_train.sh DB RUNS OUT [BASE]
# Status: prepared, not yet run on a GPU machine.
set -euo pipefail
DB=${1:?lineage database}; RUNS=${2:?comma-separated run ids}; OUT=${3:?output folder}; BASE=${4:-embedded}
evolve train-proposer --db "$DB" --runs "$RUNS" --base "$BASE" --out "$OUT/rwsft" --method rwsft \
  --device cuda --epochs 3 --batch 16 --lr 2e-4 --max-length 2048 --max-reply 512 --seed 0
evolve train-proposer --db "$DB" --runs "$RUNS" --base "$BASE" --out "$OUT/dpo" --method dpo \
  --device cuda --epochs 2 --batch 16 --lr 5e-5 --max-length 2048 --max-reply 512 --seed 0
python tests/perf/compare_trained_proposer.py --db "$DB" --trained "$OUT/rwsft" --drafts 4 --max-tokens 512
python tests/perf/compare_trained_proposer.py --db "$DB" --trained "$OUT/dpo" --drafts 4 --max-tokens 512
