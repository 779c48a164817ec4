"""The console's start-up line: where it is, or that it is off and what opens it, or
that this bot cannot serve it (tests/e2e/test_bot_start_e2e.py reads it in a real
start)."""

from __future__ import annotations

from nonebot_plugin_yuji.console import start_line


def test_an_open_console_is_its_url() -> None:
    line = start_line(token_set=True, served=True, host="127.0.0.1", port=8080)
    assert line == "yuji console: http://127.0.0.1:8080/yuji/"


def test_a_closed_console_names_the_setting_that_opens_it_and_where() -> None:
    line = start_line(token_set=False, served=True, host="0.0.0.0", port=9000)
    assert (
        line == "yuji console: off; set YUJI_CONSOLE_TOKEN to open it at http://0.0.0.0:9000/yuji/"
    )


def test_an_ipv6_host_is_bracketed_in_the_url() -> None:
    line = start_line(token_set=True, served=True, host="::1", port=8080)
    assert line == "yuji console: http://[::1]:8080/yuji/"


def test_a_driver_without_fastapi_says_so_whatever_the_token() -> None:
    for token_set in (True, False):
        line = start_line(token_set=token_set, served=False, host="127.0.0.1", port=8080)
        assert line.startswith("yuji console: not served")
        assert "DRIVER=~fastapi" in line
        assert "http://" not in line
