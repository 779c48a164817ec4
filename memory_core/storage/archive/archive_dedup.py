"""One message heard by two of the deployment's accounts is archived once.

OneBot message ids are per account, so `(scope, fingerprint)` cannot see that
account A's message 812 and account B's message 90417 are one message. The rule,
decided inside the archive writer's transaction:

- a live message (one that names its receiving `account`) is a duplicate when a
  message with the same chat, sender, `sent_at` and text was already archived from a
  *different* account; the same account hearing two identical messages in the same
  second keeps both (they are two messages);
- our own sends carry the sending process's clock, the copy another account hears
  the server's: for a sender that is one of our accounts `sent_at` may differ by up
  to `OWN_SKEW_S`;
- a message id one account already used for a different message (ids of two
  accounts can collide) is stored as `<id>@<account>`: the insert refuses it, and
  `collided` finds the id held by another account's row and stores it again so;
- a sender that is one of the deployment's accounts makes the message the bot's own
  (`is_bot`), whichever account heard it.

The check never waits for the deployment to know its accounts: every row names the
account that heard it, so another account's copy is found by comparing rows, whether
or not that account was recorded in `bot_accounts` yet (a process records its account
when it connects, and the first frames race that). The deployment's accounts are
`bot_accounts`, the accounts of the rows being written and those of the rows they are
compared with.

What makes it once across processes is the order of the transactions: on PostgreSQL
the archive writer's transaction takes its chats' write turns (`Database.write(chats=)`,
a transaction-level advisory lock per chat) in its first statement, so two processes
writing one chat run one after the other, and the second's reads here (READ COMMITTED:
each statement sees what committed before it began) see the first's rows; SQLite has
one writer (`BEGIN IMMEDIATE`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import select, text, true
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.dialect import one_of
from memory_core.storage.schema import bot_accounts, experiences

OWN_SKEW_S = 5.0
CHUNK = 900

Key = tuple[str, str]
_T = TypeVar("_T")


async def heard_once(
    conn: AsyncConnection, rows: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict[Key, int], dict[Key, Key]]:
    """The rows to insert; the keys that repeat an archived row (key -> its id); and
    the keys stored under another key (a repeat of a row in this batch). Ids that
    collide are sorted out after the insert (`collided`)."""
    live = [r for r in rows if r.get("account")]
    registered = await conn.execute(select(bot_accounts.c.account))
    ours = {str(r[0]) for r in registered} | {str(r["account"]) for r in live}
    nearby = await _nearby(conn, live) if live else []
    ours |= {str(r["account"]) for r in nearby}
    for row in rows:
        if row["sender_id"] in ours:
            row["is_bot"] = True
    if not live:
        return rows, {}, {}
    archived = _by_words(nearby)
    batch: dict[Words, list[dict[str, Any]]] = {}
    keep: list[dict[str, Any]] = []
    known: dict[Key, int] = {}
    alias: dict[Key, Key] = {}
    for row in rows:
        key: Key = (row["scope"], row["fingerprint"])
        account = row.get("account")
        if not account:
            keep.append(row)
            continue
        earlier = _same_message(row, archived) or _same_message(row, batch)
        if earlier is not None:
            if "id" in earlier:
                known[key] = int(earlier["id"])
            else:
                alias[key] = (earlier["scope"], earlier["fingerprint"])
            continue
        keep.append(row)
        batch.setdefault(_words(row), []).append(row)
    return keep, known, alias


Words = tuple[str, str, str]
"""(chat, sender, text): what two copies of one message share whatever their ids."""


def _words(row: dict[str, Any]) -> Words:
    return (row["scope"], row["sender_id"], row["text"])


def _by_words(rows: Sequence[dict[str, Any]]) -> dict[Words, list[dict[str, Any]]]:
    # A burst can hold thousands of one second's messages: matching through this map
    # keeps a batch's check linear where comparing every pair was quadratic.
    found: dict[Words, list[dict[str, Any]]] = {}
    for row in rows:
        found.setdefault(_words(row), []).append(row)
    return found


def _same_message(
    row: dict[str, Any], others: dict[Words, list[dict[str, Any]]]
) -> dict[str, Any] | None:
    for other in others.get(_words(row), ()):
        if (
            other.get("account")
            and other["account"] != row["account"]
            and _same_instant(row, other)
        ):
            return other
    return None


def _same_instant(row: dict[str, Any], other: dict[str, Any]) -> bool:
    a, b = row["sent_at"], other["sent_at"]
    # One sender (the words include it): one of ours when either copy says so (the
    # older row may predate the deployment knowing that account).
    if row["is_bot"] or other["is_bot"]:
        return abs((a - b).total_seconds()) <= OWN_SKEW_S
    return a == b


async def _nearby(conn: AsyncConnection, live: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of other accounts that could be the same message as one of `live` (a
    superset, `_same_message` decides): one statement for a batch of any chats."""
    e = experiences.c
    dialect = conn.dialect.name
    skew = timedelta(seconds=OWN_SKEW_S)
    nearby: list[dict[str, Any]] = []
    for part in _chunks(live, CHUNK // 3):
        instants: list[datetime] = [r["sent_at"] for r in part]
        accounts = {r["account"] for r in part}
        # A copy is another account's: with one account in the batch (a process with
        # one account, the usual case), its own rows are left out first, cheaply, before
        # the lists are compared (a one-second flood puts all of them in the window).
        others = e.account != next(iter(accounts)) if len(accounts) == 1 else true()
        result = await conn.execute(
            select(
                e.id, e.scope, e.fingerprint, e.sender_id, e.sent_at, e.text, e.account, e.is_bot
            ).where(
                one_of(dialect, e.scope, sorted({r["scope"] for r in part})),
                e.sent_at >= min(instants) - skew,
                e.sent_at <= max(instants) + skew,
                e.account.is_not(None),
                others,
                one_of(dialect, e.sender_id, sorted({r["sender_id"] for r in part})),
                one_of(dialect, e.text, sorted({r["text"] for r in part})),
            )
        )
        nearby += [dict(r._mapping) for r in result]  # pyright: ignore[reportPrivateUsage]
    return nearby


async def collided(
    conn: AsyncConnection, refused: Sequence[dict[str, Any]]
) -> tuple[dict[Key, int], list[dict[str, Any]], dict[Key, Key]]:
    """Sort out the rows the insert refused, their (scope, fingerprint) being taken:
    the keys that are the archived row itself (a replay, a backfill) -> its id; and,
    for a row whose id another account's message already holds (ids of two accounts
    can collide), the row again as `<id>@<account>` with its key's new name."""
    held = await held_by(conn, [(r["scope"], r["fingerprint"]) for r in refused])
    same: dict[Key, int] = {}
    renamed: list[dict[str, Any]] = []
    alias: dict[Key, Key] = {}
    for row in refused:
        key: Key = (row["scope"], row["fingerprint"])
        id_, holder = held[key]
        account = row.get("account")
        if account and holder and holder != account:
            renamed.append({**row, "fingerprint": f"{row['fingerprint']}@{account}"})
            alias[key] = (row["scope"], renamed[-1]["fingerprint"])
        else:
            same[key] = id_
    return same, renamed, alias


async def held_by(conn: AsyncConnection, keys: Sequence[Key]) -> dict[Key, tuple[int, str | None]]:
    """The archived rows of these (scope, fingerprint) keys -> (id, the account that
    heard it), found through the unique index on the pair."""
    found: dict[Key, tuple[int, str | None]] = {}
    if not keys:
        return found
    if conn.dialect.name == "postgresql":
        # One lookup a key, whatever the planner thinks of a young table (an IN list
        # on the second column was read as a filter over the whole chat).
        result = await conn.execute(
            _PG_HELD, {"scopes": [k[0] for k in keys], "fingerprints": [k[1] for k in keys]}
        )
        for scope, fingerprint, id_, account in result:
            found[(str(scope), str(fingerprint))] = (int(id_), _account(account))
        return found
    e = experiences.c
    by_scope: dict[str, list[str]] = {}
    for scope, fingerprint in set(keys):
        by_scope.setdefault(scope, []).append(fingerprint)
    for scope, fingerprints in by_scope.items():
        for chunk in _chunks(sorted(fingerprints)):
            result = await conn.execute(
                select(e.fingerprint, e.id, e.account).where(
                    e.scope == scope, e.fingerprint.in_(chunk)
                )
            )
            for fingerprint, id_, account in result:
                found[(scope, str(fingerprint))] = (int(id_), _account(account))
    return found


def _account(value: object) -> str | None:
    return None if value is None else str(value)


_PG_HELD = text(
    "SELECT e.scope, e.fingerprint, e.id, e.account FROM unnest(CAST(:scopes AS text[]), "
    "CAST(:fingerprints AS text[])) AS k(scope, fingerprint) "
    "JOIN experiences AS e ON e.scope = k.scope AND e.fingerprint = k.fingerprint"
)


def _chunks(items: Sequence[_T], size: int = CHUNK) -> list[Sequence[_T]]:
    return [items[i : i + size] for i in range(0, len(items), size)]
