"""Fit the shipped relevance weights from the training corpus.

    python training/train_relevance.py [--out DIR] [FILE.json ...]

Defaults: every file in training/corpus/, written to memory_core/recall/data/ as two
files: the weights for the bundled embedding model, and the weights without dense
features (YUJI_VECTOR_MODE=off). Deterministic: running it again on the same corpus
reproduces the shipped files (tests/core/recall/test_training.py checks this).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from memory_core.eval.training import train_files

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1].strip())
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "memory_core" / "recall" / "data")
    args = parser.parse_args()
    files = args.files or sorted((ROOT / "training" / "corpus").glob("*.json"))
    for model in asyncio.run(train_files(files)):
        path = args.out / model.file_name
        path.write_text(model.to_json(), encoding="utf-8")
        print(f"{path}: floor {model.floor:.3f}, sure {model.sure:.3f}")


if __name__ == "__main__":
    main()
