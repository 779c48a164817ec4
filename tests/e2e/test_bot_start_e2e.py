"""What `python bot.py` says when it cannot start: one line naming the variable or the
folder and what it accepts, exit 2, no traceback; a misspelled setting is named at
start; a second bot on one data folder is refused while a killed one's is not; and
what a good start says: each line once, the console's place among them."""

from __future__ import annotations

import os
import re
import shutil
import signal
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from .harness import BotProcess, running_bot, wait_until

pytestmark = pytest.mark.e2e

NOBODY = 65534


def refused(bot: BotProcess, *, prefix: Sequence[str] = ()) -> str:
    done = bot.run_to_exit(prefix=prefix)
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "Traceback" not in output
    lines = output.strip().splitlines()
    assert len(lines) == 1, output  # the refusal alone: nothing of NoneBot before it
    assert lines[0].startswith("bot.py: "), output
    return lines[0]


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"YUJI_RECALL_LIMIT": "five"}, "YUJI_RECALL_LIMIT must be a whole number"),
        ({"YUJI_TIMEZONE": "Mars/Olympus"}, "YUJI_TIMEZONE: unknown zone 'Mars/Olympus': use"),
        ({"YUJI_VECTOR_MODE": "maybe"}, "YUJI_VECTOR_MODE must be 'on', 'shadow' or 'off'"),
        ({"YUJI_ATTACHMENT_ALLOW_PRIVATE": "ture"}, "YUJI_ATTACHMENT_ALLOW_PRIVATE must be true"),
        ({"PORT": "abc"}, "PORT: Input should be a valid integer"),
    ],
)
def test_a_bad_setting_is_one_line_and_exit_2(
    tmp_path: Path, env: dict[str, str], expected: str
) -> None:
    assert expected in refused(BotProcess(tmp_path, env=env))


def test_a_file_where_the_data_folder_should_be_is_one_line(tmp_path: Path) -> None:
    bot = BotProcess(tmp_path)
    bot.data_dir.write_text("not a folder", encoding="utf-8")
    assert f"YUJI_DATA_DIR {bot.data_dir} is a file, not a folder" in refused(bot)


def test_a_read_only_data_folder_is_one_line(tmp_path: Path) -> None:
    # Root writes anywhere, so as root the bot runs as nobody, on a folder outside
    # tmp_path (whose parents nobody may not enter).
    as_root = os.geteuid() == 0
    if as_root and shutil.which("setpriv") is None:
        pytest.skip("as root, the test needs setpriv to run the bot as nobody")
    folder = Path(tempfile.mkdtemp(prefix="yuji-ro-"))
    folder.chmod(0o555)
    prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    try:
        bot = BotProcess(tmp_path, env={"YUJI_DATA_DIR": str(folder)})
        line = refused(bot, prefix=prefix if as_root else ())
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder, ignore_errors=True)
    assert f"YUJI_DATA_DIR {folder} is not writable" in line


async def test_a_second_bot_on_one_folder_is_refused_naming_the_first(tmp_path: Path) -> None:
    env = {"YUJI_RECAL_LIMIT": "3"}
    async with running_bot(tmp_path / "first", env=env) as first:
        assert first.log_text().count("YUJI_RECAL_LIMIT is not a yuji setting") == 1
        assert "did you mean YUJI_RECALL_LIMIT?" in first.log_text()
        second = BotProcess(tmp_path / "second", env={"YUJI_DATA_DIR": str(first.data_dir)})
        line = refused(second)
        assert f"another bot (pid {first.pid}) is running on {first.data_dir}" in line
        assert first.running
        await first.stop(signal.SIGKILL)  # a killed bot leaves no lock behind
    third = BotProcess(tmp_path / "third", env={"YUJI_DATA_DIR": str(first.data_dir)})
    await third.start()
    await third.stop()


TIME_STAMP = re.compile(r"^\d\d-\d\d \d\d:\d\d:\d\d ")
TICK_DONE = re.compile(r'\[INFO\] apscheduler\S* \| Job "tick .*" executed successfully')
"""APScheduler's own line (at APSCHEDULER_LOG_LEVEL=20) for the consolidation tick's
first run, two seconds after start-up: every one-off job the start scheduled sooner
has run by then (the scheduler runs due jobs in order), so a line such a job repeats
is in the log."""


def repeated_lines(log: str) -> list[str]:
    """Lines said more than once, time stamps aside (APScheduler's own lines say
    each run of a job and are left out)."""
    lines = [TIME_STAMP.sub("", line) for line in log.splitlines()]
    lines = [line for line in lines if not line.startswith("[INFO] apscheduler")]
    return sorted({line for line in lines if lines.count(line) > 1})


@pytest.mark.parametrize("token", ["", "a-console-token"])
async def test_a_start_says_each_thing_once_and_where_the_console_is(
    tmp_path: Path, token: str
) -> None:
    settings = {"YUJI_VECTOR_MODE": "off", "YUJI_CONSOLIDATION_TICK_S": "2"}
    bot = BotProcess(tmp_path, env=settings | {"YUJI_CONSOLE_TOKEN": token}, clean_cwd=True)
    (bot.cwd / ".env").write_text("APSCHEDULER_LOG_LEVEL=20\n", "utf-8")
    await bot.start()
    try:
        await wait_until(lambda: TICK_DONE.search(bot.log_text()))
    finally:
        await bot.stop()
    log = bot.log_text()
    assert repeated_lines(log) == []
    console = [line for line in log.splitlines() if "yuji console:" in line]
    where = f"http://127.0.0.1:{bot.port}/yuji/"
    if token:
        assert [line.split(" | ", 1)[1] for line in console] == [f"yuji console: {where}"]
    else:
        assert [line.split(" | ", 1)[1] for line in console] == [
            f"yuji console: off; set YUJI_CONSOLE_TOKEN to open it at {where}"
        ]
    assert log.count("yuji consolidation: skipped: no model configured") == 1
    assert log.count("yuji started: database") == 1


def test_the_repeat_check_sees_a_line_said_twice_a_second_apart() -> None:
    said = "[INFO] nonebot_plugin_yuji.jobs.consolidation | yuji consolidation: skipped"
    log = f"12-07 03:53:18 {said}\n12-07 03:53:18 [INFO] x | once\n12-07 03:53:19 {said}\n"
    log += '12-07 03:53:20 [INFO] apscheduler.executors.base | Running job "tick"\n' * 2
    assert repeated_lines(log) == [said]
