"""`yuji people`: the person index (memory_core/people/).

`rebuild [--batch N] [--from-start]` indexes the archive from where the last run
stopped, in id order, each batch committed with its progress, so an interrupted run
continues where it stopped; then it folds the aliases table in. The bot fills the index
as messages arrive, so this is for a store archived before the index existed (or to
fill what a failed batch left). When the walk is complete it resolves whom every chat's
memories are about against the index (`Memories.resolve_subjects`, a chat per
transaction) and prints how many memories each kind of subject has and how many it
changed. `show SCOPE` lists a chat's persons and their names.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from memory_core.cli.common import opened_core, scope_arg
from memory_core.cli.progress import progress_bar
from memory_core.people.service import REBUILD_BATCH, RebuildReport
from memory_core.service import Yuji
from memory_core.storage import ChatPerson
from memory_core.types import NameSource, SubjectKind

SOURCE_WORDS: dict[NameSource, str] = {
    "card": "群名片",
    "nickname": "昵称",
    "alias": "别名",
    "mention": "被@时",
}


def register(subparsers: Any) -> None:
    summary = "人物索引：每个平台用户是一个人，带着他在每个聊天里用过的名字（派生数据）"
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "people", help=summary, description=summary
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="动作", title="动作")

    rebuild_says = (
        "从存档建人物索引：从上次停下的地方按消息顺序接着建，每批连同进度一起提交，"
        "中断了再跑一次就接着建；最后合入别名表，再按索引认出每个聊天里记忆的对象"
    )
    rebuild = actions.add_parser("rebuild", help=rebuild_says, description=rebuild_says)
    rebuild.add_argument(
        "--batch",
        type=_positive,
        default=REBUILD_BATCH,
        metavar="N",
        help=f"每个事务读多少条消息（默认 {REBUILD_BATCH}）",
    )
    rebuild.add_argument(
        "--from-start", action="store_true", help="先清空人物索引和进度，从存档第一条消息重建"
    )
    rebuild.set_defaults(func=run_rebuild)

    show_says = "列出一个聊天里的每个人和他在那里用过的名字（最近的在前）"
    show = actions.add_parser("show", help=show_says, description=show_says)
    show.add_argument(
        "scope", type=scope_arg, metavar="SCOPE", help="聊天 id，如 group:123、private:456"
    )
    show.set_defaults(func=run_show)


async def run_rebuild(args: argparse.Namespace) -> int:
    async with opened_core(existing=True) as core:
        after, end = await core.people.progress()
        if args.from_start:
            after = 0
        elif after:
            print(f"接着上次：存档到第 {after} 条消息为止已经建好")
        last: list[RebuildReport] = []
        with progress_bar("人物索引", unit_bytes=False) as bar:
            if end > after:
                bar.start(end - after, 0)

            def advanced(report: RebuildReport) -> None:
                last[:] = [report]
                bar.advance_to(report.last_id - report.started_after)

            try:
                report = await core.people.rebuild(
                    batch=args.batch, from_start=args.from_start, on_batch=advanced
                )
            except (asyncio.CancelledError, KeyboardInterrupt):
                done = last[0].last_id if last else after
                print(f"中断了：已建到存档第 {done} 条消息，再跑一次 yuji people rebuild 接着建")
                raise
        print(rebuild_summary(report))
        if report.complete:
            counts = await resolve_subjects(core)
            print(subjects_summary(counts))
    return 0


async def resolve_subjects(core: Yuji) -> dict[str, int]:
    """Resolve the subject of every chat's memories against the index (one transaction
    per chat: an interrupted run keeps the chats done, and a second run changes
    nothing); the counts per kind of subject summed over the chats, `changed`, and
    `chats`."""
    total: dict[str, int] = {"chats": 0}
    for scope in await core.memories.scopes():
        for key, count in (await core.memories.resolve_subjects(scope)).items():
            total[key] = total.get(key, 0) + count
        total["chats"] += 1
    return total


KIND_WORDS: dict[SubjectKind, str] = {
    "person": "人",
    "group": "整个群",
    "bot": "机器人",
    "thing": "物",
    "unresolved": "认不出",
}


def subjects_summary(counts: Mapping[str, int]) -> str:
    kinds = "、".join(f"{word} {counts.get(kind, 0)} 条" for kind, word in KIND_WORDS.items())
    return (
        f"记忆的对象（{counts.get('chats', 0)} 个聊天）：{kinds}；"
        f"这次改了 {counts.get('changed', 0)} 条"
    )


def rebuild_summary(report: RebuildReport) -> str:
    if report.batches == 0:
        head = f"人物索引已是最新（建到存档第 {report.last_id} 条消息）"
    else:
        head = (
            f"读了 {report.messages} 条消息（{report.batches} 批），"
            f"建到存档第 {report.last_id} 条（共 {report.end} 条）"
        )
    return (
        f"{head}；合入别名 {report.aliases} 个；"
        f"索引里现有 {report.persons} 人、{report.names} 个名字"
    )


async def run_show(args: argparse.Namespace) -> int:
    async with opened_core(existing=True) as core:
        people = await core.people.in_chat(args.scope)
        zone = ZoneInfo(core.settings.timezone)
    print("\n".join(show_lines(args.scope, people, zone)))
    return 0


def show_lines(scope: str, people: Sequence[ChatPerson], zone: ZoneInfo) -> list[str]:
    """A chat's persons as `yuji people show` prints them (pure)."""
    if not people:
        return [
            f"{scope} 里还没有索引到人（没听过这个聊天，"
            "或者这些消息是索引出现前存的：跑一次 yuji people rebuild）"
        ]
    lines = [f"{scope} 里的人（{len(people)} 个，最近出现的在前）："]
    for entry in people:
        person = entry.person
        bot = "（机器人）" if person.is_bot else ""
        lines.append(f"{person.platform} {person.user_id}{bot}")
        lines += [
            f"  {n.name}〔{SOURCE_WORDS[n.source]}〕"
            f"{_when(n.first_seen, zone)} 至 {_when(n.last_seen, zone)}"
            for n in entry.names
        ]
    return lines


def _when(at: datetime, zone: ZoneInfo) -> str:
    return at.astimezone(zone).strftime("%Y-%m-%d %H:%M")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"应为正整数：{text!r}")
    return value
