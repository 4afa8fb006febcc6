#!/usr/bin/env bash
# Regenerate the committed answer files (see README.md here). Needs, offline:
#   PY      a Python with activetest (dev extra), inspect-ai, lm-eval and llama-cpp-python[server]
#   EEE_PY  a Python >= 3.12 with every-eval-ever installed (pip install "every-eval-ever[inspect]")
# Run from the repository root: bash tests/models/data/answers/make_fixtures.sh
set -euo pipefail
PY=${PY:-python}
EEE_PY=${EEE_PY:?set EEE_PY to a Python >= 3.12 with every-eval-ever}
HERE=tests/models/data/answers
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH}

# 1. real runs: SmolLM2-135M (bundled) behind llama.cpp's server answers both harnesses
"$PY" -m tests.models.answer_writers inspect "$TMP/inspect" --model smollm2
"$PY" -m tests.models.answer_writers lmeval "$TMP/lmeval" --model smollm2
EVAL=$(ls "$TMP"/inspect/*.eval)
RESULTS=$(ls "$TMP"/lmeval/results/*/results_*.json)
SAMPLES=$(ls "$TMP"/lmeval/results/*/samples_toyqa_*.jsonl)

# 2. Every Eval Ever's own converters turn those logs into EEE records
"$EEE_PY" -m every_eval_ever convert inspect --log_path "$EVAL" --output_dir "$TMP/eee/data" \
  --source_organization_name activetest-tests --evaluator_relationship other
"$EEE_PY" -m every_eval_ever convert lm_eval --log_path "$RESULTS" --output_dir "$TMP/eee/data" \
  --source_organization_name activetest-tests --evaluator_relationship other --include_samples

# 3. keep the files, under their own names (results_*.json stays out: it records the machine)
rm -rf "$HERE/inspect" "$HERE/lmeval" "$HERE/eee"
mkdir -p "$HERE/inspect" "$HERE/lmeval" "$HERE/eee"
cp "$EVAL" "$HERE/inspect/"
cp "$SAMPLES" "$HERE/lmeval/"
cp -r "$TMP/eee/data" "$HERE/eee/"   # the datastore layout data/<benchmark>/<developer>/<model>/

# 4. Every Eval Ever's validator accepts them (it checks paths relative to the datastore root)
(cd "$HERE/eee" && "$EEE_PY" -m every_eval_ever validate data/*/*/*/*.json data/*/*/*/*.jsonl)
ls -R "$HERE"
