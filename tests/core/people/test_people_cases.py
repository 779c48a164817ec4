"""Issue 43's awkward cases where the reply meets people (each backend): forgetting a
person takes their names and their card in that chat, by `/forget-me` and by `yuji
forget-person`, even when they never spoke there; and the reply's people view (the
cards it shows, whose word each memory is) for a name two members share, a renamed
member, a member who left, an @ of the bot, a Telegram user without a username, and
a name only someone of another chat goes by. Nothing crosses a chat.

The resolution of memory subjects in the same cases is
tests/core/people/test_subject_store.py's and test_subjects.py's.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory_core import EvidenceRef, NewExperience, Settings, Yuji
from memory_core.cli import main
from memory_core.errors import UsageError
from memory_core.people.cards import PeopleView, PersonCards
from memory_core.storage import PersonCardsRepo
from memory_core.types import Memory

T0 = datetime(2026, 11, 20, 11, 0, tzinfo=UTC)
G1, G2 = "group:1", "group:2"
TG = "telegram-group:-100"
BOT = "999"
_fp = itertools.count(1)


async def say(
    core: Yuji,
    scope: str,
    sender: str,
    name: str,
    text: str = "hi",
    *,
    at: datetime = T0,
    mention: tuple[str, str] | None = None,
    is_bot: bool = False,
) -> int:
    segments = [{"type": "at", "data": {"qq": mention[0], "name": mention[1]}}] if mention else []
    return await core.archive.append(
        NewExperience(
            scope=scope,
            fingerprint=f"f{next(_fp)}",
            sender_id=sender,
            sender_name=name,
            text=text,
            segments=[*segments, {"type": "text", "data": {"text": text}}],
            sent_at=at,
            is_bot=is_bot,
        )
    )


async def remember(core: Yuji, scope: str, subject: str, content: str, *evidence: int) -> Memory:
    written = await core.memories.write(
        scope,
        type="fact",
        subject=subject,
        content=content,
        evidence=[EvidenceRef(experience_id=e) for e in evidence],
    )
    return written.memory


async def card(core: Yuji, scope: str, user_id: str, text: str) -> None:
    await PersonCardsRepo(core.db).append(scope, user_id, text, "2026-11-20", T0)


async def view(
    core: Yuji,
    scope: str,
    text: str,
    *,
    asker: str | None = None,
    mentioned: Sequence[str] = (),
    memories: Sequence[Memory] = (),
) -> PeopleView:
    return await PersonCards(core.db).prompt_view(
        scope, asker=asker, mentioned=mentioned, text=text, memories=memories
    )


async def names_here(core: Yuji, scope: str, user_id: str) -> set[str]:
    return {
        n.name
        for p in await core.people.in_chat(scope)
        if p.person.user_id == user_id
        for n in p.names
    }


# --- forgetting --------------------------------------------------------------------------


async def test_forget_me_takes_their_names_and_card_here_and_nothing_elsewhere(
    core: Yuji,
) -> None:
    own = await say(core, G1, "7", "小明", "我养猫")
    await say(core, G1, "8", "阿花", "明明哥好", mention=("7", "明明哥"))
    there = await say(core, G2, "7", "小明", "我在二群")
    await remember(core, G1, "小明", "小明养猫", own)
    await remember(core, G2, "小明", "小明在二群", there)
    await card(core, G1, "7", "- 养猫")
    await card(core, G1, "7", "- 养猫\n- 爱爬山")
    await card(core, G1, "8", "- 阿花的卡")
    await card(core, G2, "7", "- 二群的小明")

    assert "再发一次" in await core.porting.forget_me(G1, "7")  # /forget-me, asked twice
    assert await PersonCardsRepo(core.db).history(G1, "7") != []
    assert "忘掉你了" in await core.porting.forget_me(G1, "7")

    repo = PersonCardsRepo(core.db)
    assert await repo.history(G1, "7") == []  # every version
    assert [c.content for c in await repo.history(G2, "7")] == ["- 二群的小明"]
    assert [c.content for c in await repo.history(G1, "8")] == ["- 阿花的卡"]
    # his own names here go; 阿花's @ of him stays, as her message does; group 2 keeps his
    assert await names_here(core, G1, "7") == {"明明哥"}
    assert await names_here(core, G2, "7") == {"小明"}
    # the reply no longer shows a card for him, asked or named
    assert (await view(core, G1, "小明最近怎么样", asker="7")).cards == ()
    assert (await view(core, G2, "我怎么样", asker="7")).cards == (("小明", "- 二群的小明"),)


async def test_a_member_only_others_talked_about_loses_their_card_too(core: Yuji) -> None:
    """老王 never spoke here: 阿花 @'d him and told about him, and a night wrote his card.
    An operator's `forget-person` (he cannot send /forget-me here) takes the card."""
    told = await say(core, G1, "8", "阿花", "老王下个月结婚", mention=("7", "老王"))
    about = await remember(core, G1, "老王", "老王下个月结婚", told)
    assert (about.subject_person, about.word) == ("7", "hearsay")
    await card(core, G1, "7", "- （阿花说）下个月结婚")

    report = await core.porting.forget_person(G1, "7", requested_by="operator")

    assert report.messages_total == 0
    assert report.memory_ids == (about.id,)
    assert await PersonCardsRepo(core.db).history(G1, "7") == []
    assert (await view(core, G1, "老王最近怎么样", asker="8")).cards == ()


def test_the_forget_person_command_takes_their_names_and_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    monkeypatch.chdir(tmp_path)  # no stray .env
    monkeypatch.setenv("YUJI_DATA_DIR", str(data))
    monkeypatch.setenv("YUJI_VECTOR_MODE", "off")
    monkeypatch.delenv("YUJI_DATABASE_URL", raising=False)

    async def seed() -> None:
        core = await Yuji.open(Settings(data_dir=data, vector_mode="off"))
        try:
            await say(core, G1, "7", "小明", "我养猫")
            await card(core, G1, "7", "- 养猫")
            await card(core, G2, "7", "- 二群的卡")
            await core.archive.flush()
        finally:
            await core.close()

    async def left() -> tuple[set[str], list[str], list[str]]:
        core = await Yuji.open(Settings(data_dir=data, vector_mode="off"))
        try:
            repo = PersonCardsRepo(core.db)
            return (
                await names_here(core, G1, "7"),
                [c.content for c in await repo.history(G1, "7")],
                [c.content for c in await repo.history(G2, "7")],
            )
        finally:
            await core.close()

    asyncio.run(seed())
    assert asyncio.run(left()) == ({"小明"}, ["- 养猫"], ["- 二群的卡"])
    assert main(["forget-person", "--scope", G1, "--user", "7"]) == 0
    assert "已在 group:1 忘掉 7" in capsys.readouterr().out
    assert asyncio.run(left()) == (set(), [], ["- 二群的卡"])


# --- the reply's people view ---------------------------------------------------------------


async def test_a_name_two_members_share_brings_only_whoever_goes_by_it_now(
    core: Yuji,
) -> None:
    """As subjects resolve (people/subjects.py): a shared name means the one member who
    goes by it now; when both do, it names neither (never guessed). An @ still does."""
    await say(core, G1, "7", "小明", at=T0)
    await say(core, G1, "7", "鱼丸", at=T0 + timedelta(days=1))  # 7 was 小明
    await say(core, G1, "8", "小明", at=T0 + timedelta(days=2))  # 8 is 小明 now
    await card(core, G1, "7", "- 七号的卡")
    await card(core, G1, "8", "- 八号的卡")

    assert (await view(core, G1, "小明最近怎么样")).cards == (("小明", "- 八号的卡"),)
    assert (await view(core, G1, "鱼丸最近怎么样")).cards == (("鱼丸", "- 七号的卡"),)

    await say(core, G1, "7", "小明", at=T0 + timedelta(days=3))  # both go by it now
    assert (await view(core, G1, "小明最近怎么样")).cards == ()
    mentioned = await view(core, G1, "@小明 最近怎么样", mentioned=("7",))
    assert mentioned.cards == (("小明", "- 七号的卡"),)


async def test_a_renamed_member_is_found_by_the_old_name_and_shown_by_the_new(
    core: Yuji,
) -> None:
    own = await say(core, G1, "7", "小明", "我下个月搬去深圳", at=T0)
    told = await say(core, G1, "8", "阿花", "小明要搬家了", at=T0 + timedelta(hours=1))
    await say(core, G1, "7", "鱼丸", "改名了", at=T0 + timedelta(days=1))
    await say(core, G1, "8", "花花", "我也改", at=T0 + timedelta(days=1))
    mine = await remember(core, G1, "小明", "小明下个月搬去深圳", own)
    heard = await remember(core, G1, "小明", "小明要搬家", told)
    await card(core, G1, "7", "- 下个月搬去深圳")

    found = await view(core, G1, "小明还搬家吗", memories=[mine, heard])

    assert found.cards == (("鱼丸", "- 下个月搬去深圳"),)
    assert (found.words[mine.id].subject, found.words[mine.id].said) == ("鱼丸", "本人说")
    assert (found.words[heard.id].subject, found.words[heard.id].said) == ("鱼丸", "花花说")


async def test_a_member_who_left_long_ago_keeps_their_card_when_named(core: Yuji) -> None:
    await say(core, G1, "7", "老王", at=T0 - timedelta(days=400))
    for day in range(3):
        await say(core, G1, "8", "阿花", at=T0 + timedelta(days=day))
    await card(core, G1, "7", "- 以前常组织爬山")
    assert (await view(core, G1, "老王以前常干嘛", asker="8")).cards == (
        ("老王", "- 以前常组织爬山"),
    )


async def test_an_at_of_the_bot_is_nobodys_card_and_the_bots_memories_no_ones_word(
    core: Yuji,
) -> None:
    asked = await say(core, G1, "8", "阿花", "@大肥鱼 你喜欢什么", mention=(BOT, "大肥鱼"))
    await say(core, G1, BOT, "大肥鱼", "我喜欢晒太阳", is_bot=True)
    about_bot = await remember(core, G1, "大肥鱼", "大肥鱼喜欢晒太阳", asked)
    assert about_bot.subject_kind == "bot"
    await card(core, G1, "8", "- 阿花的卡")

    found = await view(
        core, G1, "@大肥鱼 你喜欢什么", asker="8", mentioned=(BOT,), memories=[about_bot]
    )

    assert found.cards == (("阿花", "- 阿花的卡"),)  # the asker's only
    assert about_bot.id not in found.words  # no member's word: no 本人说 / X说 mark


async def test_a_telegram_user_without_a_username_is_found_by_their_full_name(
    core: Yuji,
) -> None:
    """The plugin names them by first and last name (telegram_convert.user_name)."""
    await say(core, TG, "123456789", "Ann Lee", "hello")
    await say(core, TG, "222", "Bob", "hi")
    await card(core, TG, "123456789", "- likes tea")
    found = await view(core, TG, "what does Ann Lee like?", asker="222")
    assert found.cards == (("Ann Lee", "- likes tea"),)
    assert (await view(core, TG, "what does Ann like?", asker="222")).cards == ()


async def test_a_name_only_someone_of_another_chat_goes_by_shows_nothing_here(
    core: Yuji,
) -> None:
    await say(core, G1, "8", "阿花", "小红是谁")
    await say(core, G2, "9", "小红", "我是小红")
    await card(core, G2, "9", "- 二群的小红")
    # even a guessed @ of her id shows nothing of group 2 here
    found = await view(core, G1, "小红是谁", asker="8", mentioned=("9",))
    assert found.cards == ()


async def test_nothing_of_another_chat_reaches_the_view(core: Yuji) -> None:
    """One person in two groups under two names, a card and a memory in each: each
    group's view has only its own."""
    here = await say(core, G1, "7", "小明", "我养猫")
    there = await say(core, G2, "7", "明哥", "我养狗")
    told = await say(core, G2, "9", "小红", "明哥养狗")
    await card(core, G1, "7", "- 养猫")
    await card(core, G2, "7", "- 养狗")
    cat = await remember(core, G1, "小明", "小明养猫", here)
    dog = await remember(core, G2, "明哥", "明哥养狗", there, told)

    g1 = await view(core, G1, "明哥和小明养什么", asker="7", memories=[cat])
    g2 = await view(core, G2, "明哥和小明养什么", asker="7", memories=[dog])

    assert g1.cards == (("小明", "- 养猫"),)
    assert g2.cards == (("明哥", "- 养狗"),)
    assert (g1.words[cat.id].subject, g2.words[dog.id].subject) == ("小明", "明哥")
    assert g2.words[dog.id].said == "本人说"


async def test_a_forgotten_speaker_is_never_named_by_their_id(core: Yuji) -> None:
    """Whose word a memory is names each speaker by their name here; one who has none
    any more (they were forgotten) is left out, never shown as a raw id."""
    await say(core, G1, "7", "小明", "大家好")
    by_hua = await say(core, G1, "8", "阿花", "小明要搬去深圳")
    by_hong = await say(core, G1, "9", "小红", "对，小明要搬去深圳")
    only_hong = await say(core, G1, "9", "小红", "小明养了猫")
    move = await remember(core, G1, "小明", "小明要搬去深圳", by_hua, by_hong)
    cat = await remember(core, G1, "小明", "小明养猫", only_hong)
    before = await view(core, G1, "小明", memories=[move, cat])
    assert before.words[move.id].said == "阿花、小红说"

    await core.porting.forget_person(G1, "9", requested_by="9")

    after = await view(core, G1, "小明", memories=[move])
    assert after.words[move.id].said == "阿花说"
    # what rested on her word alone is retracted; shown anyway, it is no one's named word
    assert (await view(core, G1, "小明", memories=[cat])).words[cat.id].said == "听说"


async def test_cards_by_a_shared_name_is_whoever_goes_by_it_now_else_asks_for_an_at(
    core: Yuji,
) -> None:
    await say(core, G1, "7", "小明", at=T0)
    await say(core, G1, "7", "鱼丸", at=T0 + timedelta(days=1))
    await say(core, G1, "8", "小明", at=T0 + timedelta(days=2))
    await card(core, G1, "7", "- 七号的卡")
    await card(core, G1, "8", "- 八号的卡")

    async def admin() -> bool:
        return True

    shown = await core.chat_commands.cards(G1, "小明", asker="1", is_admin=admin)
    assert "八号的卡" in shown
    assert "七号" not in shown
    await say(core, G1, "7", "小明", at=T0 + timedelta(days=3))  # both go by it now
    with pytest.raises(UsageError, match="好几个人"):
        await core.chat_commands.cards(G1, "小明", asker="1", is_admin=admin)
