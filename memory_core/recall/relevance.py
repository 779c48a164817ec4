"""The one relevance model: P(a memory answers the question) from its features (pure).

A logistic regression over `features.FEATURES`, standardised, with the sign of every
monotone feature's weight held to `features.MONOTONE`. Its weights, and the operating
points chosen on validation data, are a versioned JSON file under data/ written by
`python training/train_relevance.py` from the corpus in training/corpus/; the file names the
embedding model it was fitted for, and loading it for another model is refused (the
scale of one model's cosines says nothing about another's).

P ranks: the best candidates by P are injected (at most five). Two operating points,
both chosen on held-out chats of the training corpus (memory_core/eval/training.py):
- `floor`: below it a candidate is clear noise and is dropped (it removes at most a
  few percent of the answers the candidates hold);
- `sure`: at or above it an injected memory is in the `sure` band, below it `related`
  (few near misses, questions nothing here answers, reach it).
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

from .chatter import ChatterGate
from .features import FEATURES, MONOTONE

FORMAT = 2
LEXICAL = "none"
"""The embedder name of weights fitted without dense features (YUJI_VECTOR_MODE=off)."""
NO_RERANKER = "none"
RERANK = "rerank"
"""The reranker's score (recall/rerank.py): a column only rows of a configured reranker
carry, after every column of FEATURES; only weights fitted for a reranker read it."""
COLUMNS = (*FEATURES, RERANK)
SIGNS = {**MONOTONE, RERANK: 1}

Vector = npt.NDArray[np.float64]


@dataclass(frozen=True)
class RelevanceModel:
    embedder: str
    features: tuple[str, ...]
    mean: Vector
    scale: Vector
    weights: Vector
    bias: float
    floor: float
    sure: float
    chatter: ChatterGate | None = None
    """The gate that silences wakes asking about nothing (None: every wake asks)."""
    meta: dict[str, Any] = field(default_factory=dict[str, Any])
    reranker: str = NO_RERANKER
    """The reranker these weights read the score of (`RERANK`), or none."""

    def p(self, rows: npt.NDArray[np.floating]) -> Vector:
        """P(relevant) for each row of FEATURES values."""
        x = self._columns(np.asarray(rows, dtype=np.float64))
        z = ((x - self.mean) / self.scale) @ self.weights + self.bias
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))

    def contributions(
        self, row: npt.NDArray[np.floating], against: npt.NDArray[np.floating] | None = None
    ) -> dict[str, float]:
        """How much each feature moved this row's log-odds against `against` (a memory
        with nothing in common with the question, features.unrelated), or against the
        training mean when None (for /why and /recall)."""
        x = self._columns(np.asarray(row, dtype=np.float64).reshape(1, -1))[0]
        ref = self.mean
        if against is not None:
            ref_row = np.asarray(against, dtype=np.float64).reshape(1, -1)
            if RERANK in self.features and ref_row.shape[1] == len(FEATURES):
                # A memory with nothing in common is the reranker's lowest score, 0.
                ref_row = np.hstack([ref_row, np.zeros((1, 1))])
            ref = self._columns(ref_row)[0]
        parts = (x - ref) / self.scale * self.weights
        return {name: float(v) for name, v in zip(self.features, parts, strict=True)}

    def strongest(
        self,
        row: npt.NDArray[np.floating],
        k: int = 3,
        against: npt.NDArray[np.floating] | None = None,
    ) -> tuple[tuple[str, float], ...]:
        """The `k` features that moved this row's log-odds most, either way (name,
        rounded); against a reference row only those that differ from it."""
        parts = self.contributions(row, against)
        moved = [(n, v) for n, v in parts.items() if against is None or abs(v) > 1e-9]
        top = sorted(moved, key=lambda kv: -abs(kv[1]))[:k]
        return tuple((name, round(v, 3)) for name, v in top)

    def _columns(self, rows: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        names = FEATURES if rows.shape[1] == len(FEATURES) else COLUMNS
        if self.features == names:
            return rows
        index = [names.index(name) for name in self.features]
        return rows[:, index]

    @property
    def file_name(self) -> str:
        return weights_file(self.embedder, self.reranker)

    def to_json(self) -> str:
        data = {
            "format": FORMAT,
            "embedder": self.embedder,
            "features": list(self.features),
            "mean": [round(float(v), 10) for v in self.mean],
            "scale": [round(float(v), 10) for v in self.scale],
            "weights": [round(float(v), 10) for v in self.weights],
            "bias": round(self.bias, 10),
            "floor": round(self.floor, 6),
            "sure": round(self.sure, 6),
            "chatter": self.chatter.to_dict() if self.chatter is not None else None,
            "meta": self.meta,
        }
        if self.reranker != NO_RERANKER:
            data["reranker"] = self.reranker
        return json.dumps(data, ensure_ascii=False, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str) -> RelevanceModel:
        data = json.loads(text)
        if data.get("format") != FORMAT:
            raise ConfigError(
                f"relevance weights of format {data.get('format')!r}, this recall reads "
                f"format {FORMAT}: refit them with `yuji eval DATASET --calibrate`"
            )
        names = tuple(data["features"])
        unknown = [n for n in names if n not in COLUMNS]
        if unknown:
            raise ConfigError(f"relevance weights: unknown features {unknown}")
        return cls(
            embedder=str(data["embedder"]),
            features=names,
            mean=np.asarray(data["mean"], dtype=np.float64),
            scale=np.asarray(data["scale"], dtype=np.float64),
            weights=np.asarray(data["weights"], dtype=np.float64),
            bias=float(data["bias"]),
            floor=float(data["floor"]),
            sure=float(data["sure"]),
            chatter=ChatterGate.from_dict(data["chatter"]) if data.get("chatter") else None,
            meta=dict(data.get("meta", {})),
            reranker=str(data.get("reranker", NO_RERANKER)),
        )


def weights_file(embedder: str, reranker: str = NO_RERANKER) -> str:
    """The file name for an embedder id (and a reranker id: a calibrated pair)."""
    name = embedder if reranker == NO_RERANKER else f"{embedder}+{reranker}"
    safe = "".join(ch if ch.isalnum() or ch in "._-+" else "_" for ch in name)
    return f"relevance-{safe}.json"


CALIBRATE = "yuji eval --calibrate"


def load(
    embedder: str,
    path: Path | None = None,
    *,
    reranker: str = NO_RERANKER,
    calibrated: Path | None = None,
) -> RelevanceModel:
    """The weights for `embedder` (`LEXICAL` without dense features) and `reranker`:
    the file at `path`, else the one shipped for the pair, else the one `yuji eval
    --calibrate` wrote into the folder `calibrated`. Weights of another pair are
    refused."""
    shipped = resources.files("memory_core.recall").joinpath("data", weights_file(embedder))
    if path is not None:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"relevance weights {path}: {exc.strerror}") from exc
    elif reranker == NO_RERANKER and shipped.is_file():
        text = shipped.read_text(encoding="utf-8")
    else:
        fitted = calibrated / weights_file(embedder, reranker) if calibrated else None
        if fitted is None or not fitted.is_file():
            with_reranker = f" with the reranker {reranker!r}" if reranker != NO_RERANKER else ""
            raise ConfigError(
                f"no calibration for the embedding model {embedder!r}{with_reranker}: "
                f"run `{CALIBRATE}` with these models configured"
            )
        text = fitted.read_text(encoding="utf-8")
    model = RelevanceModel.from_json(text)
    if model.reranker != reranker:
        raise ConfigError(
            f"relevance weights were fitted for the reranker {model.reranker!r}, not "
            f"{reranker!r}: run `{CALIBRATE}` with these models configured"
        )
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
    steps: int = 60,
) -> tuple[Vector, Vector, Vector, float]:
    """Logistic regression by projected Newton steps (deterministic): returns (mean,
    scale, weights, bias). Monotone features keep the sign MONOTONE gives: a weight
    held at zero by its sign stays out of the step until the gradient pulls it inward."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = np.hstack([(x - mean) / scale, np.ones((len(y), 1))])
    sign = np.array([SIGNS.get(n, 0) for n in names] + [0], dtype=np.float64)
    n = len(y)
    ridge = np.full(z.shape[1], l2 / n)
    ridge[-1] = 0.0  # the bias is not shrunk
    w = np.zeros(z.shape[1])
    w[-1] = float(np.log((y.mean() + 1e-9) / (1 - y.mean() + 1e-9)))

    def loss(v: Vector) -> float:
        m = z @ v
        return float(np.mean(np.logaddexp(0.0, m) - y * m) + 0.5 * ridge @ (v * v))

    current = loss(w)
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ w, -30, 30)))
        grad = z.T @ (p - y) / n + ridge * w
        # A weight at its bound whose gradient pushes it further out stays fixed.
        held = ((sign > 0) & (w <= 0) & (grad > 0)) | ((sign < 0) & (w >= 0) & (grad < 0))
        free = ~held
        hess = (z[:, free].T * (p * (1 - p))) @ z[:, free] / n + np.diag(ridge[free] + 1e-9)
        step = np.zeros_like(w)
        step[free] = np.linalg.solve(hess, -grad[free])
        size = 1.0
        while size > 1e-4:
            trial = _project(w + size * step, sign)
            tried = loss(trial)
            if tried <= current:
                break
            size /= 2
        else:
            break
        moved = float(np.abs(trial - w).max())
        w, current = trial, tried
        if moved < 1e-7:
            break
    return mean, scale, w[:-1], float(w[-1])


def _project(w: Vector, sign: Vector) -> Vector:
    return np.where(sign > 0, np.maximum(w, 0.0), np.where(sign < 0, np.minimum(w, 0.0), w))
