"""The one relevance model: P(a memory answers the question) from its features (pure).

A logistic regression over `features.FEATURES`, standardised, with the sign of every
monotone feature's weight held to `features.MONOTONE`. Its weights, and the operating
points chosen on validation data, are a versioned JSON file under data/ written by
`python training/train_relevance.py` from the corpus in training/corpus/; the file names the
embedding model it was fitted for, and loading it for another model is refused (the
scale of one model's cosines says nothing about another's).

Operating points:
- `threshold`: a question is answered only when some candidate reaches it (else
  silence);
- `companion`: once one has, others at or above this come along (up to the limit);
- `sure`: below this an injected memory is labelled as a guess.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_core.errors import ConfigError

from .features import FEATURES, MONOTONE

FORMAT = 1
LEXICAL = "none"
"""The embedder name of weights fitted without dense features (YUJI_VECTOR_MODE=off)."""

Vector = npt.NDArray[np.float64]


@dataclass(frozen=True)
class RelevanceModel:
    embedder: str
    features: tuple[str, ...]
    mean: Vector
    scale: Vector
    weights: Vector
    bias: float
    threshold: float
    companion: float
    sure: float
    meta: dict[str, Any] = field(default_factory=dict[str, Any])

    def p(self, rows: npt.NDArray[np.floating]) -> Vector:
        """P(relevant) for each row of FEATURES values."""
        x = self._columns(np.asarray(rows, dtype=np.float64))
        z = ((x - self.mean) / self.scale) @ self.weights + self.bias
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))

    def contributions(self, row: npt.NDArray[np.floating]) -> dict[str, float]:
        """How much each feature moved this row's log-odds (for /why and /recall)."""
        x = self._columns(np.asarray(row, dtype=np.float64).reshape(1, -1))[0]
        parts = (x - self.mean) / self.scale * self.weights
        return {name: float(v) for name, v in zip(self.features, parts, strict=True)}

    def _columns(self, rows: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        if self.features == FEATURES:
            return rows
        index = [FEATURES.index(name) for name in self.features]
        return rows[:, index]

    @property
    def file_name(self) -> str:
        return weights_file(self.embedder)

    def to_json(self) -> str:
        data = {
            "format": FORMAT,
            "embedder": self.embedder,
            "features": list(self.features),
            "mean": [round(float(v), 10) for v in self.mean],
            "scale": [round(float(v), 10) for v in self.scale],
            "weights": [round(float(v), 10) for v in self.weights],
            "bias": round(self.bias, 10),
            "threshold": round(self.threshold, 6),
            "companion": round(self.companion, 6),
            "sure": round(self.sure, 6),
            "meta": self.meta,
        }
        return json.dumps(data, ensure_ascii=False, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str) -> RelevanceModel:
        data = json.loads(text)
        if data.get("format") != FORMAT:
            raise ConfigError(f"relevance weights: unknown format {data.get('format')!r}")
        names = tuple(data["features"])
        unknown = [n for n in names if n not in FEATURES]
        if unknown:
            raise ConfigError(f"relevance weights: unknown features {unknown}")
        return cls(
            embedder=str(data["embedder"]),
            features=names,
            mean=np.asarray(data["mean"], dtype=np.float64),
            scale=np.asarray(data["scale"], dtype=np.float64),
            weights=np.asarray(data["weights"], dtype=np.float64),
            bias=float(data["bias"]),
            threshold=float(data["threshold"]),
            companion=float(data["companion"]),
            sure=float(data["sure"]),
            meta=dict(data.get("meta", {})),
        )


def weights_file(embedder: str) -> str:
    """The shipped file name for an embedder id."""
    safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in embedder)
    return f"relevance-{safe}.json"


def load(embedder: str, path: Path | None = None) -> RelevanceModel:
    """The weights for `embedder` (`LEXICAL` without dense features): the file at
    `path`, else the one shipped for it. Weights of another embedder are refused."""
    if path is not None:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"relevance weights {path}: {exc.strerror}") from exc
    else:
        shipped = resources.files("memory_core.recall").joinpath("data", weights_file(embedder))
        if not shipped.is_file():
            raise ConfigError(
                f"no relevance weights ship for the embedding model {embedder!r}; "
                "fit them with `yuji eval DATASET --calibrate` and set YUJI_RELEVANCE_WEIGHTS"
            )
        text = shipped.read_text(encoding="utf-8")
    model = RelevanceModel.from_json(text)
    if model.embedder != embedder:
        raise ConfigError(
            f"relevance weights were fitted for {model.embedder!r}, not {embedder!r}: "
            "refit them for this model with `yuji eval DATASET --calibrate`"
        )
    return model


def fit(
    x: npt.NDArray[np.floating],
    y: npt.NDArray[np.floating],
    names: tuple[str, ...],
    *,
    l2: float = 1.0,
    steps: int = 3000,
) -> tuple[Vector, Vector, Vector, float]:
    """Logistic regression by projected gradient descent (deterministic): returns
    (mean, scale, weights, bias). Monotone features keep the sign MONOTONE gives."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = (x - mean) / scale
    sign = np.array([MONOTONE.get(n, 0) for n in names], dtype=np.float64)
    w = np.zeros(z.shape[1])
    b = float(np.log((y.mean() + 1e-9) / (1 - y.mean() + 1e-9)))
    n = len(y)
    lr = 1.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ w + b, -30, 30)))
        grad_w = z.T @ (p - y) / n + l2 * w / n
        grad_b = float(np.mean(p - y))
        w = w - lr * grad_w
        b -= lr * grad_b
        w = np.where(sign > 0, np.maximum(w, 0.0), np.where(sign < 0, np.minimum(w, 0.0), w))
    return mean, scale, w, b
