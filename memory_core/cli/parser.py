"""argparse in the manual's language: the headings of `yuji --help` and the parser's
own refusals in Chinese, and help text wrapped by the columns it takes.

argparse says "usage:", "options" and its errors through gettext, and Python ships no
Chinese catalogue for it. Installing one would reach every parser in the process
(pytest's too), so this parser renames only its own words: the section headings
through its formatter, `-h` by adding it itself, and each error line by the patterns
below (an error argparse words otherwise still reads, in English). Subparsers are made
of the parser's own class (argparse's default), so `yuji import qq-txt --help` speaks
Chinese as well.

argparse wraps help with textwrap, which counts a Chinese character as one column
(it takes two) and breaks only at spaces, so a Chinese line ran past the terminal or
was cut inside an English name; `wrap` counts columns and breaks between Chinese
characters, never inside a latin word or before closing punctuation.
"""

from __future__ import annotations

import argparse
import re
import sys
import unicodedata
from collections.abc import Iterable
from typing import Any, NoReturn

HEADINGS = {"positional arguments": "位置参数", "options": "选项"}

ERRORS: tuple[tuple[str, str], ...] = (
    (r"^argument (\S+): ", r"参数 \1："),
    (r"invalid choice: (.*) \(choose from (.*)\)$", r"没有这个选择：\1（可选：\2）"),
    (r"invalid \S+ value: (.*)$", r"这个值不行：\1"),
    (r"expected one argument$", "后面要跟一个值"),
    (r"expected at least one argument$", "后面至少要跟一个值"),
    (r"not allowed with argument (.*)$", r"不能和 \1 一起用"),
    (r"ignored explicit argument (.*)$", r"不该带值：\1"),
    (r"^the following arguments are required: (.*)$", r"缺少必需的参数：\1"),
    (r"^one of the arguments (.*) is required$", r"这几个参数必须给一个：\1"),
    (r"^unrecognized arguments: (.*)$", r"不认识的参数：\1"),
    (r"^ambiguous option: (\S+) could match (.*)$", r"选项 \1 有歧义，可能是 \2"),
)
"""argparse's error sentences (Python 3.11) and their Chinese, applied in order."""


NO_LINE_START = frozenset("，。、；：！？）》」』”’,.;:!?)]")
"""Punctuation that stays at the end of the line before rather than open a line."""

TOKEN = re.compile(
    r"\s+|[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]|[^\s\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]+"
)
"""A run of blanks, one wide (CJK) character, or a latin word (kept whole)."""


def columns(text: str) -> int:
    """Terminal columns `text` takes: a wide or full-width character takes two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def wrap(text: str, width: int) -> list[str]:
    """`text` (blanks collapsed) in lines of at most `width` columns (pure); a latin word
    longer than a line is left whole on its own line."""
    lines: list[str] = []
    line = ""
    for token in TOKEN.findall(" ".join(text.split())):
        if token == " ":
            if line:
                line += " "
            continue
        if line and columns(line + token) > width and token[0] not in NO_LINE_START:
            lines.append(line.rstrip())
            line = ""
        line += token
    if line.strip():
        lines.append(line.rstrip())
    return lines


def chinese_error(message: str) -> str:
    """argparse's error `message` in Chinese, as far as the patterns know it (pure)."""
    for pattern, replacement in ERRORS:
        message = re.sub(pattern, replacement, message)
    return message


class ChineseHelpFormatter(argparse.HelpFormatter):
    def add_usage(
        self,
        usage: str | None,
        actions: Iterable[argparse.Action],
        groups: Iterable[argparse._MutuallyExclusiveGroup],  # pyright: ignore[reportPrivateUsage]
        prefix: str | None = None,
    ) -> None:
        super().add_usage(usage, actions, groups, "用法：" if prefix is None else prefix)

    def start_section(self, heading: str | None) -> None:
        super().start_section(HEADINGS.get(heading or "", heading))

    def _split_lines(self, text: str, width: int) -> list[str]:
        return wrap(text, width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n".join(indent + line for line in wrap(text, width - len(indent)))


class YujiParser(argparse.ArgumentParser):
    """An ArgumentParser whose headings, `-h` and errors are Chinese."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", ChineseHelpFormatter)
        add_help = kwargs.pop("add_help", True)
        super().__init__(*args, add_help=False, **kwargs)
        if add_help:
            self.add_argument(
                "-h", "--help", action="help", default=argparse.SUPPRESS, help="显示这段帮助并退出"
            )

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: 错误：{chinese_error(message)}\n")
