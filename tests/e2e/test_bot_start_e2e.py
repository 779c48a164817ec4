"""What `python bot.py` says when it cannot start: one line naming the variable or the
folder and what it accepts, exit 2, no traceback; a misspelled setting is named at
start; and a second bot on one data folder is refused while a killed one's is not."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from .harness import BotProcess, running_bot

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
