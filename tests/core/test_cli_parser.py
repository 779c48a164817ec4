"""`yuji --help`, every subcommand's help and the parser's refusals are Chinese, like
the manual (memory_core/cli/parser.py)."""

from __future__ import annotations

import re

import pytest

from memory_core.cli import SUBCOMMANDS, main
from memory_core.cli.parser import chinese_error, columns, wrap

CJK = re.compile(r"[\u4e00-\u9fff]")
ENGLISH_SENTENCE = re.compile(r"\b[a-z]{2,} [a-z]{2,} [a-z]{2,}\b")
"""Three lowercase English words in a row: a help text nobody translated."""

IMPORT_SOURCES = ("chatrecorder", "qq-txt", "facts", "pack")


def help_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--help"])
    assert exit_info.value.code == 0
    return capsys.readouterr().out


def without_usage(text: str) -> str:
    """The help after its usage block (which lists option names, not sentences)."""
    return text.split("\n\n", 1)[1]


def test_yuji_help_is_chinese_and_names_every_subcommand(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = help_of([], capsys)
    assert out.startswith("用法：yuji [-h] [--data-dir DIR] 子命令 ...")
    assert "\n选项:\n" in out
    assert "\n子命令:\n" in out
    assert "显示这段帮助并退出" in out
    for english in ("usage:", "options:", "positional arguments", "show this help"):
        assert english not in out
    assert ENGLISH_SENTENCE.search(without_usage(out)) is None
    for name in SUBCOMMANDS:
        assert re.search(rf"^    {re.escape(name)}\s", out, re.M), name


def test_the_one_line_of_import_names_every_source(capsys: pytest.CaptureFixture[str]) -> None:
    out = help_of([], capsys)
    summary = out.split("    import", 1)[1].split("\n    demo", 1)[0]
    assert "chatrecorder" in summary
    assert all(word in summary for word in ("QQ", "事实", "记忆包"))


@pytest.mark.parametrize(
    "argv",
    [[name] for name in SUBCOMMANDS] + [["import", source] for source in IMPORT_SOURCES],
    ids=lambda argv: " ".join(argv),
)
def test_every_subcommand_explains_itself_in_chinese(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    out = help_of(argv, capsys)
    assert out.startswith(f"用法：yuji {' '.join(argv)} ")
    body = without_usage(out)
    assert CJK.search(body.split("\n", 1)[0]), "the description is Chinese"
    assert ENGLISH_SENTENCE.search(body) is None, body
    assert "显示这段帮助并退出" in body
    # Every option says what it does in Chinese (the lines under 选项 / 位置参数
    # that begin an option and carry a help text).
    for line in body.splitlines():
        option = re.match(r"^  (-\S+(?: \S+)?(?:, --\S+)?)\s{2,}(\S.*)$", line)
        if option is not None:
            assert CJK.search(option[2]), line


def test_a_refusal_of_the_parser_is_chinese(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["status", "--nope"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("用法：yuji ")
    assert err.rstrip().endswith("yuji: 错误：不认识的参数：--nope")

    with pytest.raises(SystemExit):
        main(["recall", "问题"])
    assert "yuji recall: 错误：缺少必需的参数：--scope" in capsys.readouterr().err

    with pytest.raises(SystemExit):
        main(["statsu"])
    assert "错误：参数 子命令：没有这个选择：'statsu'（可选：'backup'" in capsys.readouterr().err


def test_argparse_errors_it_does_not_know_stay_as_they_are() -> None:
    assert chinese_error("argument --at: expected one argument") == "参数 --at：后面要跟一个值"
    assert chinese_error("something new") == "something new"


def test_wrap_counts_columns_and_keeps_latin_words_whole() -> None:
    text = "为配置的嵌入模型（YUJI_EMBED_*、YUJI_VECTOR_MODEL_PATH）拟合权重，写进 FILE"
    lines = wrap(text, 24)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert all(columns(line) <= 24 for line in lines if "YUJI_VECTOR_MODEL_PATH" not in line)
    assert any(line.startswith("YUJI_VECTOR_MODEL_PATH") for line in lines)
    assert not any(line.startswith(("，", "）", "、")) for line in lines)
    assert columns("鱼记 ab") == 7
