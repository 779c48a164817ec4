"""Every setting is documented in .env.example and on the site's settings page; every
command on the site; the README short, with every shell command it shows runnable as
written; every file, section and command a docstring or a document names exists."""

from __future__ import annotations

import os
import re
from pathlib import Path

from memory_core import Settings

ROOT = Path(__file__).resolve().parents[1]


def test_every_setting_is_in_env_example() -> None:
    documented = set(
        re.findall(r"^(YUJI_[A-Z0-9_]+)=", (ROOT / ".env.example").read_text("utf-8"), re.M)
    )
    expected = {f"YUJI_{name.upper()}" for name in Settings.model_fields}
    assert expected - documented == set()
    assert documented - expected == set()


def test_env_example_values_are_the_defaults() -> None:
    from memory_core.settings import settings_from_mapping

    text = (ROOT / ".env.example").read_text("utf-8")
    values = dict(re.findall(r"^(YUJI_[A-Z0-9_]+)=(.*)$", text, re.M))
    # Empty values mean "unset"; the rest must parse to exactly the shipped defaults.
    assert settings_from_mapping({k: v for k, v in values.items() if v}) == Settings()


def test_every_cli_subcommand_is_on_the_site() -> None:
    from memory_core.cli import SUBCOMMANDS

    page = (ROOT / "docs" / "cli.md").read_text("utf-8")
    missing = [name for name in SUBCOMMANDS if f"`yuji {name}" not in page]
    assert missing == []


def test_every_chat_command_is_on_the_site() -> None:
    page = (ROOT / "docs" / "chat-commands.md").read_text("utf-8")
    sources = "\n".join(p.read_text("utf-8") for p in (ROOT / "nonebot_plugin_yuji").rglob("*.py"))
    commands = set(re.findall(r"(?:on_command|slash)\(\s*[\"']([^\"']+)[\"']", sources))
    assert commands, "no chat commands found: did the plugin layout change?"
    missing = sorted(c for c in commands if f"`/{c}" not in page)
    assert missing == []


def test_the_settings_page_is_written_from_the_settings_model() -> None:
    from memory_core.cli.settings_page import render

    page = (ROOT / "docs" / "settings.md").read_text("utf-8")
    assert page == render(), (
        "run `python -m memory_core.cli.settings_page --write docs/settings.md` after "
        "changing memory_core/settings.py"
    )
    listed = set(re.findall(r"^\| `YUJI_([A-Z0-9_]+)` \|", page, re.M))
    assert listed == {name.upper() for name in Settings.model_fields}


def test_every_setting_has_chinese_words_on_the_settings_page() -> None:
    """A new setting shows its English docstring until it is said in Chinese in
    settings_zh.json (the page test above passes either way, so a merge never breaks
    on it); no entry there names a setting that is gone."""
    import json

    said = json.loads((ROOT / "memory_core" / "cli" / "settings_zh.json").read_text("utf-8"))
    assert set(said["fields"]) == set(Settings.model_fields)
    assert set(said["sections"]) <= set(Settings.model_fields)


SITE_PAGES = (
    "index.md",
    "quickstart.md",
    "connect.md",
    "models.md",
    "settings.md",
    "chat-commands.md",
    "cli.md",
    "console.md",
    "how-it-works.md",
    "postgres.md",
    "backup.md",
    "import-export.md",
    "privacy.md",
    "troubleshooting.md",
    "benchmarks.md",
    "design.md",
)
"""The manual's pages (mkdocs.yml's nav); the site build itself is tests/test_docs_site.py."""


def test_the_site_names_every_page_in_its_nav() -> None:
    config = (ROOT / "mkdocs.yml").read_text("utf-8")
    nav = re.findall(r"^\s*- [^:]+: ([\w./-]+\.md)\s*$", config, re.M)
    assert [p for p in SITE_PAGES if p not in nav] == []
    assert [p for p in nav if not (ROOT / "docs" / p).is_file()] == []


# --- the README: short, and every shell command in it runs as written ----------------

README_MAX_LINES = 150


def test_the_readme_fits_on_a_screen_or_two() -> None:
    lines = (ROOT / "README.md").read_text("utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES


def readme_commands(text: str) -> list[str]:
    """Every line of the README's ```sh blocks (comments and blanks left out)."""
    found: list[str] = []
    for block in re.findall(r"^```(?:sh|bash|shell)\n(.*?)^```", text, re.M | re.S):
        found += [
            line.split(" #", 1)[0].strip()
            for line in block.splitlines()
            if line.strip() and not line.lstrip().startswith("#")
        ]
    return found


def command_problems(line: str) -> list[str]:
    """Why one README command would not work as written on a fresh clone (the virtual
    environment is never activated there, so every tool is named by its path in
    .venv). Each step of a `&&` chain must be a form checked here; a new form fails
    until this function learns what makes it work."""
    import shlex
    import tomllib

    from memory_core.cli import build_parser

    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    extras: dict[str, list[str]] = project["optional-dependencies"]
    problems: list[str] = []
    for step in (shlex.split(part) for part in line.split("&&")):
        match step:
            case ["python3", "-m", "venv", ".venv"]:
                pass
            case [".venv/bin/pip", "install", "-e", target]:
                wanted = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", target)
                unknown = (
                    [e for e in (wanted.group(1) or "").split(",") if e and e not in extras]
                    if wanted
                    else [target]
                )
                problems += [f"{line}: no extra or target {u!r} in pyproject.toml" for u in unknown]
            case [".venv/bin/python", script] if script.endswith(".py"):
                if not (ROOT / script).is_file():
                    problems.append(f"{line}: {script} is not in the repository")
            case [".venv/bin/python", "-m", "pytest", *_]:
                if not any(r.startswith("pytest") for r in extras["test"]):
                    problems.append(f"{line}: pytest is not in the test extra")
            case [".venv/bin/yuji", *args]:
                if "yuji" not in project["scripts"]:
                    problems.append(f"{line}: no `yuji` console script")
                try:
                    build_parser().parse_args(args)
                except SystemExit:
                    problems.append(f"{line}: `yuji` does not take these arguments")
            case [".venv/bin/mkdocs", "build", *_]:
                if not (ROOT / "mkdocs.yml").is_file() or not any(
                    r.startswith("mkdocs-material") for r in extras.get("docs", [])
                ):
                    problems.append(
                        f"{line}: no mkdocs.yml, or no mkdocs-material in the docs extra"
                    )
            case _:
                problems.append(f"{line}: `{shlex.join(step)}` is a form this test cannot check")
    return problems


def test_every_shell_command_in_the_readme_works_as_written() -> None:
    commands = readme_commands((ROOT / "README.md").read_text("utf-8"))
    assert (
        "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/python bot.py" in commands
    )
    assert (
        "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/python -m pytest"
        in commands
    )
    assert [p for c in commands for p in command_problems(c)] == []


def test_the_readme_command_check_catches_what_it_is_for() -> None:
    assert command_problems("yuji demo") == [
        "yuji demo: `yuji demo` is a form this test cannot check"
    ]
    assert command_problems(".venv/bin/yuji no-such-command") == [
        ".venv/bin/yuji no-such-command: `yuji` does not take these arguments"
    ]
    assert command_problems(".venv/bin/pip install -e '.[nope]'") == [
        ".venv/bin/pip install -e '.[nope]': no extra or target 'nope' in pyproject.toml"
    ]
    assert command_problems(".venv/bin/python missing.py") == [
        ".venv/bin/python missing.py: missing.py is not in the repository"
    ]


def test_env_example_is_written_from_the_settings_model() -> None:
    from memory_core.cli.env_example import render

    assert (ROOT / ".env.example").read_text("utf-8") == render(), (
        "run `yuji env-example --write .env.example` after changing memory_core/settings.py"
    )


# --- every reference points at a file that exists ------------------------------------

SCANNED_PY = ("memory_core", "nonebot_plugin_yuji", "benchmarks", "training")
"""Folders whose .py files are scanned (with bot.py); every .md of the repository is."""
SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "data-demo"})

FILE_REF = re.compile(
    r"(?<![\w./<-])((?:\.{1,2}/)*[\w-][\w.-]*(?:/[\w.-]+)*\.(?:md|py))(?:#([\w-]+))?(?![\w/])"
)
"""A path ending in .md or .py, optionally with a #section: `docs/x.md#y`, `SPEC.md`,
`recall/engine.py`. Not part of a URL or a longer path (the look-behind)."""
MD_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
SECTION_CITE = re.compile(r"\b([A-Z][A-Z_]{2,})(?:\.md)?\s*§")
"""`SPEC §4`, `SPEC.md §8.2`: a numbered section of a document, which must be here."""
CLI_REF = re.compile(r"`yuji ([a-z][a-z-]*)")


def _walk() -> list[Path]:
    found: list[Path] = []
    for folder, dirs, names in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS]
        found += [Path(folder) / name for name in names]
    return found


def scanned_files() -> list[Path]:
    files = _walk()
    py = [p for p in files if p.suffix == ".py" and p.relative_to(ROOT).parts[0] in SCANNED_PY]
    return sorted({*py, ROOT / "bot.py", *(p for p in files if p.suffix == ".md")})


def heading_anchors(markdown: str) -> set[str]:
    """GitHub's anchors for the headings of a markdown text (repeats get -1, -2...)."""
    anchors: set[str] = set()
    for title in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", markdown, re.M):
        slug = re.sub(r"[^\w\- ]", "", title.replace("`", "").lower()).replace(" ", "-")
        n, candidate = 0, slug
        while candidate in anchors:
            n += 1
            candidate = f"{slug}-{n}"
        anchors.add(candidate)
    return anchors


def _resolve(source: Path, ref: str, names: set[str]) -> Path | None:
    """A path is relative to the referencing file's folder or any folder above it up
    to the repository root (`storage/fulltext/fts.py` from memory_core/recall/); a bare file
    name may also name a file anywhere in the repository (`persona_default.md`)."""
    if ref.startswith(("./", "../")):
        target = (source.parent / ref).resolve()
        return target if target.exists() else None
    folder = source.parent
    while True:
        if (folder / ref).exists():
            return folder / ref
        if folder == ROOT or ROOT not in folder.parents:
            break
        folder = folder.parent
    if "/" not in ref and ref in names:
        return ROOT
    return None


def _anchor_problem(target: Path, anchor: str | None, where: str, text: str = "") -> list[str]:
    """`text` is the target's own contents when a link points into its own file."""
    if not anchor or target.suffix != ".md" or not (text or target.is_file()):
        return []
    if anchor in heading_anchors(text or target.read_text("utf-8")):
        return []
    return [f"{where}: no section #{anchor} in {target.relative_to(ROOT)}"]


def broken_references(source: Path, text: str, names: set[str], commands: set[str]) -> list[str]:
    """What in `text` (the contents of `source`) names a file, a section or a `yuji`
    command that does not exist."""
    rel = source.relative_to(ROOT) if ROOT in source.parents else source
    problems: list[str] = []

    def where(pos: int) -> str:
        return f"{rel}:{text.count(chr(10), 0, pos) + 1}"

    for m in FILE_REF.finditer(text):
        target = _resolve(source, m.group(1), names)
        if target is None:
            problems.append(f"{where(m.start())}: {m.group(1)} is not in the repository")
        else:
            problems += _anchor_problem(target, m.group(2), where(m.start()))
    if source.suffix == ".md":
        for m in MD_LINK.finditer(text):
            link = m.group(1)
            if re.match(r"[a-z][a-z+.-]*:", link):
                continue  # a URL
            path, _, anchor = link.partition("#")
            if not path:
                problems += _anchor_problem(source, anchor, where(m.start()), text)
            elif not (target := (source.parent / path).resolve()).exists():
                problems.append(f"{where(m.start())}: link to {link}, which does not exist")
            else:
                problems += _anchor_problem(target, anchor or None, where(m.start()))
    for m in SECTION_CITE.finditer(text):
        if f"{m.group(1)}.md" not in names:
            problems.append(f"{where(m.start())}: cites {m.group(0)}, not in the repository")
    for m in CLI_REF.finditer(text):
        if m.group(1) not in commands:
            problems.append(f"{where(m.start())}: `yuji {m.group(1)}` is no subcommand")
    return problems


def _commands() -> set[str]:
    from memory_core.cli import SUBCOMMANDS

    return set(SUBCOMMANDS)


def test_every_reference_points_at_a_file_that_exists() -> None:
    names = {p.name for p in _walk()}
    commands = _commands()
    problems = [
        problem
        for path in scanned_files()
        for problem in broken_references(path, path.read_text("utf-8"), names, commands)
    ]
    assert problems == []


def test_the_reference_check_catches_what_it_is_for() -> None:
    names = {p.name for p in _walk()}
    source = ROOT / "memory_core" / "recall" / "engine.py"
    text = "\n".join(
        [
            '"""At most five memories (SPEC.md §8).',
            "See SPEC §9, eval/FORMAT.md and docs/design.md#no-such-section;",
            "fitted by `yuji train-relevance`, layout in storage/fulltext/fts.py,",
            "rules in docs/design.md#recall, format in docs/eval-format.md.",
            '"""',
        ]
    )
    found = broken_references(source, text, names, _commands())
    assert [p.split(": ", 1)[1] for p in found] == [
        "SPEC.md is not in the repository",
        "eval/FORMAT.md is not in the repository",
        "no section #no-such-section in docs/design.md",
        "cites SPEC.md §, not in the repository",
        "cites SPEC §, not in the repository",
        "`yuji train-relevance` is no subcommand",
    ]
    readme = ROOT / "docs" / "x.md"
    links = "[a](privacy.md#删除一个人) [b](missing.md) [c](#nowhere) [d](https://x.org/a.md)"
    found = broken_references(readme, links, names, _commands())
    assert [p.split(": ", 1)[1] for p in found] == [
        "missing.md is not in the repository",
        "link to missing.md, which does not exist",
        "no section #nowhere in docs/x.md",
    ]
