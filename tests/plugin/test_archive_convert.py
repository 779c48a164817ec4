"""The pure OneBot v11 -> archive converter."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core import AttachmentRef
from nonebot_plugin_yuji.archive_convert import (
    MAX_INLINE_DATA,
    MAX_SEGMENT_DEPTH,
    MAX_SEGMENTS,
    clean_text,
    convert,
    display_name,
    message_experience,
)

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def seg(kind: str, **data: Any) -> dict[str, Any]:
    return {"type": kind, "data": data}


def test_text_at_and_reply() -> None:
    got = convert(
        [
            seg("reply", id="123"),
            seg("at", qq="42", name="小明"),
            seg("text", text=" 你好"),
            seg("at", qq="all"),
            seg("at", qq="77"),
        ]
    )
    assert got.text == "@小明 你好@全体成员@77"
    assert got.reply_to == "123"
    assert got.segments[0] == seg("reply", id="123")
    assert got.attachments == ()


def test_images_and_stickers_become_attachment_refs() -> None:
    got = convert(
        [
            seg("image", file="a.jpg", url="https://multimedia.nt.qq.com.cn/a"),
            seg("image", file="b.gif", url="http://x/b", sub_type=1),
            seg("mface", url="https://gxh.vip.qq.com/c", summary="[摸鱼]", emoji_id="1"),
            seg("image", file="https://legacy/only-in-file.png"),
            seg("image", file="abc.image"),  # no URL: recorded only
        ]
    )
    assert got.text == "[图片][动画表情][摸鱼][图片][图片]"
    assert got.attachments == (
        AttachmentRef(0, "https://multimedia.nt.qq.com.cn/a", "image"),
        AttachmentRef(1, "http://x/b", "sticker"),
        AttachmentRef(2, "https://gxh.vip.qq.com/c", "sticker"),
        AttachmentRef(3, "https://legacy/only-in-file.png", "image"),
    )


def test_voice_video_and_files_are_recorded_but_not_fetched() -> None:
    got = convert(
        [
            seg("record", file="v.amr", url="http://x/v.amr"),
            seg("video", file="v.mp4", url="http://x/v.mp4"),
            seg("file", name="报告.pdf", url="http://x/f"),
        ]
    )
    assert got.text == "[语音][视频][文件:报告.pdf]"
    assert got.attachments == ()
    assert [s["type"] for s in got.segments] == ["record", "video", "file"]


def test_cq_code_lookalikes_stay_text() -> None:
    text = "[CQ:image,file=http://evil/x.png] &#91;CQ:at,qq=all&#93;"
    got = convert([seg("text", text=text)])
    assert got.text == text
    assert got.attachments == ()


def test_unknown_and_malformed_segments_never_raise() -> None:
    got = convert(
        [
            seg("brand_new_type", foo=[1, 2]),
            {"type": "text"},
            {"data": {"text": "no type"}},
            "just a string",
            None,
            {"type": "image", "data": "not a dict"},
            {"type": "reply", "data": {"id": {"nested": True}}},
        ]
    )
    assert got.text == "[brand_new_type][unknown][unknown][unknown][图片]"
    assert got.reply_to is None
    assert got.segments[4] == {"type": "unknown", "data": {}}
    assert got.segments[5] == {"type": "image", "data": {"value": "not a dict"}}


def test_inline_base64_payloads_are_not_archived_whole() -> None:
    payload = "base64://" + "A" * (MAX_INLINE_DATA * 2)
    got = convert([seg("image", file=payload)])
    assert len(json.dumps(got.segments)) < 200
    assert got.attachments == ()


def test_a_100kb_message_is_kept_whole() -> None:
    text = "鱼" * 34_200
    assert convert([seg("text", text=text)]).text == text


def test_display_name_prefers_the_group_card() -> None:
    assert display_name("阿鱼", "fish") == "阿鱼"
    assert display_name("  ", "fish") == "fish"
    assert display_name(None, None) == ""


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=10,
)


@given(st.lists(json_values, max_size=6))
def test_any_json_input_converts_to_json_safe_output(raw: list[Any]) -> None:
    got = convert(raw)
    assert len(got.segments) == len(raw)
    json.dumps(got.segments)
    assert isinstance(got.text, str)
    for ref in got.attachments:
        assert ref.url.lower().startswith(("http://", "https://"))


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "post_type": st.sampled_from(["message", "message_sent"]) | _json,
            "message_type": st.sampled_from(["group", "private", "guild"]) | _json,
            "group_id": st.integers(0, 10**12) | _json,
            "user_id": st.integers(0, 10**12) | _json,
            "message_id": st.integers() | _json,
            "time": st.integers() | _json,
            "sender": st.fixed_dictionaries({}, optional={"card": _json, "nickname": _json})
            | _json,
            "message": st.lists(
                st.fixed_dictionaries({"type": st.text() | _json, "data": _json}), max_size=5
            )
            | _json,
        },
    )
)
def test_any_json_message_converts_or_is_skipped_and_is_storable(item: dict[str, Any]) -> None:
    exp = message_experience(item, self_id="1", now=lambda: NOW)
    if exp is None:
        return
    # Everything stored encodes as UTF-8 and as JSON (what SQLite is handed).
    for text in (exp.text, exp.sender_name, exp.fingerprint, exp.sender_id, exp.scope):
        text.encode("utf-8")
    json.dumps(exp.segments, ensure_ascii=False).encode("utf-8")


def test_lone_surrogates_are_replaced_and_the_original_kept() -> None:
    converted = convert([{"type": "text", "data": {"t\udc00": "a\ud83db"}}])
    segment = converted.segments[0]
    assert segment["data"] == {"t\ufffd": "a\ufffdb"}
    assert json.loads(segment["original"]) == {"t\udc00": "a\ud83db"}
    assert clean_text("整个😀表情") == "整个😀表情"  # a whole pair is untouched


def test_depth_is_capped_and_the_segment_kept() -> None:
    deep: Any = 1
    for _ in range(MAX_SEGMENT_DEPTH * 3):
        deep = [deep]
    data = convert([{"type": "json", "data": {"x": deep}}]).segments[0]["data"]
    level = data["x"]
    for _ in range(MAX_SEGMENT_DEPTH - 1):
        level = level[0]
    assert level == f"[nested deeper than {MAX_SEGMENT_DEPTH} levels, not archived]"


def test_segments_past_the_cap_are_counted_not_kept() -> None:
    got = convert([seg("text", text="x")] * (MAX_SEGMENTS + 5))
    assert len(got.segments) == MAX_SEGMENTS + 1
    assert got.segments[-1] == {"type": "truncated", "data": {"segments_not_archived": 5}}
    assert got.text == "x" * MAX_SEGMENTS + "[后面还有5段未存档]"
