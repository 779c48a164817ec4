"""The `yuji` command answers operator mistakes in one line, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core.cli import main
from memory_core.types import parse_scope


def test_a_missing_dataset_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", str(tmp_path / "nope.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("yuji eval: ")
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_malformed_dataset_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    assert main(["eval", str(bad)]) == 2
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("command", ["recall", "consolidate", "nightly"])
def test_a_malformed_scope_is_refused_by_the_parser(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [command, "--scope", "group:../etc"]
    if command == "recall":
        argv.insert(1, "question")
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert "错误：参数 --scope：不是聊天 id：'group:../etc'" in capsys.readouterr().err


@given(st.sampled_from(["group", "private"]), st.integers(min_value=1, max_value=10**19))
def test_every_real_chat_id_parses_to_itself(kind: str, number: int) -> None:
    scope = f"{kind}:{number}"
    assert parse_scope(scope) == scope


@pytest.mark.parametrize(
    "text", ["", "group:", "group:0", "guild:1", "group:1 ", "group:1;drop", "private:-5"]
)
def test_anything_else_is_refused(text: str) -> None:
    if text == "group:1 ":
        assert parse_scope(text) == "group:1"  # surrounding blanks are a typing slip
        return
    with pytest.raises(ValueError, match="not a chat id"):
        parse_scope(text)


def test_a_file_that_is_not_json_points_to_the_format(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "README.md"]) == 2
    err = capsys.readouterr().err
    assert "README.md is not a dataset in JSON" in err
    assert "docs/eval-format.md" in err
    assert len(err.strip().splitlines()) == 1


def test_json_that_is_not_a_dataset_names_the_missing_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "package.json"
    path.write_text('{"name": "x", "version": "1.0"}', encoding="utf-8")
    assert main(["eval", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "yuji eval: not a recall dataset: it has no 'now' field (docs/eval-format.md)"


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"scopes": ["group:1"]}, "scopes[0] is not as docs/eval-format.md describes it"),
        ({"memories": [{"id": "m1", "scope": "group:1"}]}, "memories[0] has no 'type' field"),
        (
            {"messages": [{"id": "e1", "scope": "group:1", "time": "2026-11-20T20:00:00"}]},
            "messages[0]: time '2026-11-20T20:00:00' has no timezone",
        ),
        (
            {
                "queries": [
                    {"id": "q", "scope": "group:1", "tier": "t", "text": "x", "context": ["hi"]}
                ]
            },
            'queries[0]: a context turn is {"sender_name", "text", "is_bot"}',
        ),
    ],
)
def test_a_malformed_entry_is_named_by_its_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, object], said: str
) -> None:
    dataset: dict[str, object] = {
        "now": "2026-11-20T20:00:00+08:00",
        "scopes": [{"id": "group:1"}],
        "messages": [],
        "memories": [],
        "queries": [],
        **change,
    }
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(dataset), encoding="utf-8")
    assert main(["eval", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("yuji eval: not a recall dataset: ")
    assert said in err
    assert len(err.splitlines()) == 1


def test_a_misspelled_setting_is_named_once_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("YUJI_LLM_MODLE=deepseek-chat\n", encoding="utf-8")
    monkeypatch.setenv("YUJI_RECAL_LIMIT", "3")
    assert main(["env-example"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "yuji: warning: YUJI_LLM_MODLE is not a yuji setting and is ignored; "
        "did you mean YUJI_LLM_MODEL?",
        "yuji: warning: YUJI_RECAL_LIMIT is not a yuji setting and is ignored; "
        "did you mean YUJI_RECALL_LIMIT?",
    ]
