"""A scripted rerank (and embeddings) server for measuring the reranker's plumbing
offline: the issue's bar (docs/providers.md).

    python benchmarks/rerank_oracle.py --port 8765 [--delay-ms 0] DATASET.json ...

It scores a (question, memory) pair by the share of the question's character bigrams
the memory holds, and 0.99 when the memory is one the dataset expects for that
question (the dataset question the text sent is, by character-bigram overlap, closest
to). Point `YUJI_RERANK_BASE_URL` at http://127.0.0.1:PORT/v1, run `yuji eval
--calibrate` (name the training corpus files too: the oracle knows the answers of
the datasets it was given), then `yuji eval DATASET`. It measures that a reranker
which ranks the answer first reaches the bands, not the quality of any real model.
`/v1/embeddings` answers hashed-character vectors, for runs that also need an API
embedding model.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.provider_server import ProviderServer, bigram_share, bigrams

MATCH_AT_LEAST = 0.3
"""A text sent that shares less than this (Jaccard of bigrams) with every dataset
question is no dataset question: plain bigram share."""


class Oracle:
    def __init__(self, files: list[Path]) -> None:
        self.questions: list[tuple[set[str], frozenset[str]]] = []
        for path in files:
            data = json.loads(path.read_text("utf-8"))
            content = {m["id"]: m["content"] for m in data["memories"]}
            for q in data["queries"]:
                expected = frozenset(content[i] for i in q.get("expect_any", []) if i in content)
                self.questions.append((bigrams(q["text"]), expected))
        self._cache: dict[str, frozenset[str]] = {}
        self._lock = threading.Lock()

    def expected(self, query: str) -> frozenset[str]:
        with self._lock:
            hit = self._cache.get(query)
        if hit is not None:
            return hit
        sent = bigrams(query)
        best, found = 0.0, frozenset[str]()
        for grams, expected in self.questions:
            union = len(sent | grams)
            score = len(sent & grams) / union if union else 0.0
            if score > best + 1e-9:
                best, found = score, expected
            elif abs(score - best) <= 1e-9:
                found = found | expected
        chosen = found if best >= MATCH_AT_LEAST else frozenset[str]()
        with self._lock:
            self._cache[query] = chosen
        return chosen

    def score(self, query: str, document: str) -> float:
        if any(text in document for text in self.expected(query)):
            return 0.99
        return bigram_share(query, document)


def main() -> None:
    parser = argparse.ArgumentParser(description="the scripted rerank server of the bar")
    parser.add_argument("files", nargs="*", type=Path, help="none: plain bigram share")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--delay-ms", type=float, default=0.0)
    args = parser.parse_args()
    oracle = Oracle(args.files)
    server = ProviderServer(score=oracle.score, delay_s=args.delay_ms / 1000).start(args.port)
    print(f"rerank oracle on {server.base_url} ({len(oracle.questions)} questions)", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
