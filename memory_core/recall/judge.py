"""An optional judge for hard silence (`YUJI_RECALL_JUDGE=llm`).

The relevance model cannot always tell a near miss (the person and the topic are
there, the thing asked is not) from an answer. The judge asks the background model
once per wake, with the question and the memories recall chose, which of them state
the thing asked; its answer moves memories between the bands: named ones become
`sure`, the others `related`. It never adds a memory, never drops one, and only ever
sees the memories recall already chose for this chat. A timeout, an error or an
answer that is not the JSON asked for leaves the bands as recall set them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import replace

from memory_core.errors import LLMError
from memory_core.llm.base import LLMClient
from memory_core.prompts.judge import JudgeAnswer, judge_prompt, parse_judge
from memory_core.prompts.structured import response_schema
from memory_core.types import Band, Recalled

from .dense_port import RELATED_LABEL

log = logging.getLogger(__name__)

JUDGED = {"sure": "（判断：说的正是问的事）", "related": "（判断：没说到问的事）"}


class Judge:
    def __init__(self, llm: LLMClient, timeout_s: float) -> None:
        self._llm = llm
        self.timeout_s = timeout_s

    async def bands(
        self, scope: str, question: str, items: Sequence[Recalled]
    ) -> tuple[Recalled, ...]:
        """`items` with their bands as the judge sees them (unchanged on any failure)."""
        items = tuple(items)
        if not items:
            return items
        messages = judge_prompt(
            question, [(i.memory.id, i.memory.subject, i.memory.content) for i in items]
        )
        try:
            async with asyncio.timeout(self.timeout_s):
                response = await self._llm.chat(
                    messages,
                    temperature=0.0,
                    timeout_s=self.timeout_s,
                    schema=response_schema(JudgeAnswer),
                    scope=scope,
                )
        except (LLMError, TimeoutError) as exc:
            log.info("recall judge for %s gave no answer (%s); bands stand", scope, exc)
            return items
        answer = parse_judge(response.message.content)
        if answer is None:
            log.info("recall judge for %s answered garbage; bands stand", scope)
            return items
        return rebanded(items, frozenset(answer.answers))


def rebanded(items: Sequence[Recalled], sure_ids: frozenset[int]) -> tuple[Recalled, ...]:
    """Each item in the band the judge gave it (ids it did not name are related;
    ids it named that are not among the items are ignored)."""
    out: list[Recalled] = []
    for item in items:
        band: Band = "sure" if item.memory.id in sure_ids else "related"
        if band == item.band:
            out.append(replace(item, reason=item.reason + JUDGED[band]))
        else:
            out.append(replace(item, band=band, reason=_relabel(item.reason, band)))
    return tuple(out)


def _relabel(reason: str, band: Band) -> str:
    """A reason rewritten for its new band (a related one carries RELATED_LABEL)."""
    prefix = f"{RELATED_LABEL}（"
    if band == "sure" and reason.startswith(prefix):
        inner, _, rest = reason[len(prefix) :].partition("）")
        return inner + rest + JUDGED["sure"]
    if band == "related" and not reason.startswith(prefix):
        head, sep, when = reason.partition("（")  # a validity note follows in brackets
        return f"{prefix}{head}）" + sep + when + JUDGED["related"]
    return reason + JUDGED[band]
