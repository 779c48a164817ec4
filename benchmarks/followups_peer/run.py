"""The follow-ups drill end to end: the real bot on a fake clock, the OneBot peer, the
fake model (issue #44's "end-to-end drill with a fake clock").

    .venv/bin/python -m benchmarks.followups_peer.run [--days 30] [--seed 7] [--json]

`python bot.py` runs under libfaketime (tests/e2e/faketime.py) from Monday 2027-03-01;
the drill (drill.py) moves its wall clock by rewriting the file, the peer plays NapCat
and sends every message with the fake day's timestamp, and model.py answers every
prompt as a model would (report.py recounts). Three chats: 阿哲's private chat, a group
whose admin sends `/followups on` on the first morning and `/mute 3天` on the fifth,
and a group without follow-ups. Each day, at random minutes from 08:00 to 23:00, members
chat, tell of their own plans 1 to 8 days ahead ("我3月12号面试"), and wake the persona
(an @ in a group; every message in the private chat); some plans still ahead are
cancelled ("我3月12号的面试取消了": the model searches and retracts), moved ("…改到3月
14号了": searched, written anew, superseded) or forgotten (`/forget N` by the group's
admin, or by 阿哲 in his own chat); only plans told on an earlier day change, so the
run does not hang on the bot's timing. The clock moves in coarse steps: 02:00 (night,
passing the nightly run at 04:00 on the way to morning) and every hour from 09:00 to
22:00, each a look of the follow-up job the drill waits for (`YUJI_FOLLOWUP_CHECK_S=1`:
a run whose APScheduler `Running job` line is stamped at or after the step, and its
end); the events between steps are sent at their own minutes (HH:MM:30, never on the
edge of a quiet time), and the job, running every real second, may send then too. Each
wake waits for the reply and for the matcher to end (a cited follow-up is marked after
the send). Every day's messages are archived and consolidated before the next day.

A follow-up sent unprompted is a `send_private_msg` / `send_group_msg` carrying the
fake model's follow-up line; asked in passing is a reply whose prompt carried the
follow-up block and whose reply cited its marker (the model always cites it). The
violations are recounted from the drill's own log (what it said when, the mute, the
hours, the caps), never from the bot's tables: sends at night, in the muted group,
in the group without, after the plan ended (forgotten, cancelled, moved), twice for one
plan (either way), two in a chat on one local day, two to a person within a week, a
follow-up with a reply target, one offered outside its window, a reply in the muted
group; and the ways one could be lost: a look at which the rules allowed a send in a
chat and none came (`passed_over`), a wake by its person while it was due that offered
nothing (`woken_offered_nothing`). Each follow-up that came due is accounted for:
asked unprompted, asked in passing, still due at the end, or expired for a reason.
`other` says how often the rules were put to the test (looks at night, in the mute,
in the group without, each with a follow-up due; looks allowing a send; wakes with one
due) and what the bot logged; `followup_rows` holds the bot's own `followups` rows
against the log.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

from benchmarks.followups_drill import outcomes, show
from tests.e2e.faketime import FakeClock
from tests.e2e.harness import BotProcess
from tests.fakes.openai_server import FakeOpenAIServer

from .drill import ENV, OFF, START, WINDOW_DAYS, Drill, local
from .model import FakeModel
from .report import states, violations


async def run(days: int, seed: int, folder: Path) -> dict[str, Any]:
    model = FakeModel()
    server = FakeOpenAIServer(handler=model).start()
    clock = FakeClock(folder, local(START, 7 * 3600 + 50 * 60))
    bot = BotProcess(folder, env={**ENV, **server.env(), **clock.env()})
    await bot.start()
    try:
        async with bot.peer() as peer:
            drill = Drill(bot, peer, clock, model, random.Random(seed))
            peer.handler = drill.answer
            for index in range(days):
                await drill.day(index)
            log = bot.log_text()
            result = {
                "days": days,
                "seed": seed,
                "plans_told": len(drill.plans),
                "plans_changed": {
                    how: drill.counts[f"plans_{how}"] for how in ("cancelled", "moved", "forgotten")
                },
                "changes_the_model_could_not_carry_out": sum(
                    1 for p in drill.plans.values() if not p.carried
                ),
                **outcomes(
                    drill.plans.values(), START + timedelta(days=days - 1), WINDOW_DAYS, OFF
                ),
                "followup_rows": states(drill),
                "violations": violations(drill),
                "other": {
                    "plain_sends_not_a_followup": drill.counts["other_plain_sends"],
                    "wakes_unanswered": drill.counts["wakes_unanswered"],
                    "looks_allowing_a_send": drill.counts["looks_allowing_a_send"],
                    **{
                        key: drill.counts[key]
                        for key in (
                            "night_looks_with_one_due",
                            "muted_looks_with_one_due",
                            "looks_with_one_due_in_the_group_without",
                        )
                    },
                    "wakes_with_one_due": drill.counts["wakes_with_one_due"],
                    "model_requests": len(server.requests),
                    "consolidation_passes_failed": log.count("consolidation scheduler pass failed"),
                    "errors_logged": log.count("[ERROR]"),
                },
            }
    finally:
        pid = bot.pid
        await bot.stop()
        FakeClock.cleanup(pid)
        server.stop()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description="the follow-ups drill through the real bot")
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", type=Path, help="run in this folder and keep it (bot.log)")
    args = parser.parse_args()
    if args.keep is not None:
        result = asyncio.run(run(args.days, args.seed, args.keep))
    else:
        with tempfile.TemporaryDirectory() as folder:
            result = asyncio.run(run(args.days, args.seed, Path(folder)))
    show(result, as_json=args.json)


if __name__ == "__main__":
    main()
