"""Which structured-output mode each provider accepts, learnt by asking.

A call expecting JSON is sent in the strongest mode not yet refused for its base URL
and model: `json_schema` (strict), then `json_object`, then the prompt alone. A
provider refusing a mode (HTTP 400 naming the response format) moves that base URL
and model down one step, for every later call of this process. A forced mode
(`YUJI_LLM_JSON_MODE`) is never moved. Whatever the mode, the caller validates the
reply against the prompt's response model and asks again when it does not fit.
"""

from __future__ import annotations

import logging
import threading

from .wire import JSON_MODES, JsonMode

log = logging.getLogger("yuji.llm")


class JsonModes:
    def __init__(self, forced: JsonMode | None = None) -> None:
        self.forced: JsonMode | None = forced
        self._learnt: dict[tuple[str, str], JsonMode] = {}
        self._lock = threading.Lock()

    def current(self, base_url: str, model: str) -> JsonMode:
        if self.forced is not None:
            return self.forced
        with self._lock:
            learnt = self._learnt.get((base_url, model))
        return JSON_MODES[0] if learnt is None else learnt

    def refused(self, base_url: str, model: str, mode: JsonMode) -> JsonMode | None:
        """`mode` was refused: the next one to try, or None when nothing weaker is left
        (or the mode is forced)."""
        if self.forced is not None or mode == JSON_MODES[-1]:
            return None
        weaker = JSON_MODES[JSON_MODES.index(mode) + 1]
        with self._lock:
            known = self._learnt.get((base_url, model))
            if known is None or JSON_MODES.index(known) < JSON_MODES.index(weaker):
                self._learnt[(base_url, model)] = weaker
                log.warning("llm: %s at %s refuses %s; using %s", model, base_url, mode, weaker)
        return weaker

    def learnt(self) -> dict[tuple[str, str], JsonMode]:
        with self._lock:
            return dict(self._learnt)
