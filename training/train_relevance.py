"""Fit the shipped relevance weights from the training corpus.

    python training/train_relevance.py [--out DIR] [FILE.json ...]
    python training/train_relevance.py --check

Defaults: every file in training/corpus/, written to memory_core/recall/data/ as two
files: the weights for the bundled embedding model, and the weights without dense
features (YUJI_VECTOR_MODE=off). Deterministic: running it again on the same corpus
reproduces the shipped files: `--check` retrains and compares with them, writing
nothing (CI runs it; the test suite checks a smaller stored fit, see
tests/core/recall/test_training.py).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from memory_core.eval.training import TOLERANCE, differences, train_files
from memory_core.recall import relevance
from memory_core.settings import Settings
from memory_core.vectors.factory import embedder_from_settings
from memory_core.vectors.kept import KeptEmbedder, KeptVectors, kept_file

ROOT = Path(__file__).resolve().parent.parent
VECTORS = ROOT / "training" / "vectors"
COMPARE_EVERY = 4
"""`--check` embeds a quarter of the corpus's texts again to see the model still gives
them (the suite's check embeds every text of its smaller fit)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[1].strip())
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "memory_core" / "recall" / "data")
    parser.add_argument(
        "--check", action="store_true", help="retrain and compare with the shipped files"
    )
    args = parser.parse_args()
    files = args.files or sorted((ROOT / "training" / "corpus").glob("*.json"))
    live = embedder_from_settings(Settings())
    vectors = kept_file(VECTORS, live.model_id)
    kept = KeptVectors.load(vectors, live.model_id)
    embedder = KeptEmbedder(kept, live, grow=not args.check, compare_every=COMPARE_EVERY)
    # The check compares the fit itself; the small stored check is the suite's.
    models = asyncio.run(train_files(files, check=not args.check, embedder=embedder))
    print(f"{len(kept.used)} vectors kept; the model gives them to cosine {embedder.agreement:.6f}")
    if args.check:
        raise SystemExit(check(models))
    # A fit on files of one's own keeps the corpus's vectors as they are.
    if not args.files and kept.save(vectors):
        print(f"{vectors}: written")
    for model in models:
        path = args.out / model.file_name
        path.write_text(model.to_json(), encoding="utf-8")
        print(f"{path}: floor {model.floor:.3f}, sure {model.sure:.3f}")


def check(models: list[relevance.RelevanceModel]) -> int:
    """0 when every retrained model matches the shipped one, else 1 (and what differs)."""
    failed = 0
    for model in models:
        diff = differences(model, relevance.load(model.embedder), TOLERANCE)
        print(f"{model.embedder}: {'differs in ' + ', '.join(diff) if diff else 'reproduced'}")
        failed += bool(diff)
    if failed:
        print(
            "the shipped weights are not what the corpus gives: python training/train_relevance.py"
        )
    return int(bool(failed))


if __name__ == "__main__":
    main()
