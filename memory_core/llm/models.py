"""A model per job: chat, consolidation, nightly and vision (`core.models`).

`YUJI_LLM_*` is every job's model; `YUJI_<JOB>_LLM_BASE_URL / _API_KEY / _MODEL`
override it for one job (usually a cheap model for consolidation and nightly, a
better one for chat). Vision has no default: images are described only when
`YUJI_VISION_LLM_MODEL` is set. Jobs naming the same endpoint share one client,
and every client shares one `JsonModes`, so what a provider refused is learnt once.
Each job's client is wrapped in `MeteredLLM`, so every call is recorded under its job.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory_core.clock import Clock
from memory_core.settings import LLM_JOBS, LLMJob, Settings

from .base import LLMClient
from .metered import MeteredLLM, UsageSink
from .modes import JsonModes
from .openai_client import OpenAICompatibleClient, forced_mode


@dataclass(frozen=True, slots=True)
class Models:
    chat: MeteredLLM | None
    consolidation: MeteredLLM | None
    nightly: MeteredLLM | None
    vision: MeteredLLM | None
    judge: MeteredLLM | None = None
    """Recall's judge: the consolidation model, counted under its own job."""
    followup: MeteredLLM | None = None
    """Unprompted follow-ups (memory_core/followups/): the chat model, its own job."""
    clients: tuple[OpenAICompatibleClient, ...] = ()
    """The HTTP clients behind the jobs, given or opened (closed by `aclose`)."""

    def of(self, job: LLMJob) -> MeteredLLM | None:
        client: MeteredLLM | None = getattr(self, job)
        return client

    @property
    def metered(self) -> Sequence[MeteredLLM]:
        jobs = [self.of(job) for job in LLM_JOBS]
        return [m for m in (*jobs, self.judge, self.followup) if m is not None]

    async def aclose(self) -> None:
        for client in self.metered:
            await client.drain()
        for http in self.clients:
            await http.aclose()


def open_models(
    settings: Settings,
    *,
    sink: UsageSink,
    clock: Clock,
    injected: LLMClient | None = None,
    vision: LLMClient | None = None,
) -> Models:
    """Each job's client: `injected` (tests, benchmarks) for chat, consolidation and
    nightly, `vision` for vision; else one from the job's settings, or None when the
    job has no model."""
    modes = JsonModes(forced_mode(settings.llm_json_mode))
    opened: dict[tuple[str, str, str], OpenAICompatibleClient] = {}
    given_clients = [c for c in (injected, vision) if isinstance(c, OpenAICompatibleClient)]

    def client_for(job: LLMJob) -> MeteredLLM | None:
        given = vision if job == "vision" else injected
        if given is not None:
            name = given.model if isinstance(given, OpenAICompatibleClient) else "injected"
            return MeteredLLM(given, job=job, model=name, sink=sink, clock=clock)
        if injected is not None and job == "vision":
            return None  # an injected model is never assumed to see images
        endpoint = settings.model_for(job)
        if endpoint is None:
            return None
        key = (endpoint.base_url, endpoint.api_key, endpoint.model)
        if key not in opened:
            opened[key] = OpenAICompatibleClient(settings, job=job, modes=modes)
        http = opened[key]
        return MeteredLLM(http, job=job, model=http.model, sink=sink, clock=clock)

    consolidation = client_for("consolidation")
    judge = None
    if consolidation is not None:
        judge = MeteredLLM(
            consolidation.inner, job="judge", model=consolidation.model, sink=sink, clock=clock
        )
    chat = client_for("chat")
    followup = None
    if chat is not None:
        followup = MeteredLLM(chat.inner, job="followup", model=chat.model, sink=sink, clock=clock)
    return Models(
        chat=chat,
        followup=followup,
        consolidation=consolidation,
        judge=judge,
        nightly=client_for("nightly"),
        vision=client_for("vision"),
        clients=(*opened.values(), *given_clients),
    )
