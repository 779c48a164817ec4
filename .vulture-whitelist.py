"""What vulture cannot see being used (`vulture` reads this file with the code).

Each name is reached only from outside Python's view: a library calls it, a
template reads it, or it is written for a library to read. A name that code or a
test uses needs no line here; a line whose name nothing uses any more goes.
"""

from typing import Any

from memory_core.archive.fetcher import _CheckedBackend  # pyright: ignore[reportPrivateUsage]
from memory_core.cli.parser import ChineseHelpFormatter
from memory_core.console.tunables import SettingView
from memory_core.console.views import EvidenceItem
from memory_core.people.carrying import Travels
from memory_core.settings import Settings
from memory_core.types import MemoryVersion
from nonebot_plugin_yuji.onebot_adapter import IngestAdapter

_: Any = None

_CheckedBackend.connect_unix_socket  # httpcore's network backend interface
_._pool  # httpx's transport reads the pool it is given
_.isolation_level  # sqlite3 reads it: the driver leaves transactions to us
_.intra_op_num_threads  # onnxruntime's session options
_.inter_op_num_threads
_.normalizer  # the tokenizers library's pipeline (the tests' tiny model)
_.pre_tokenizer
_.post_processor
_.ir_version  # onnx's model proto
ChineseHelpFormatter._split_lines  # argparse's HelpFormatter wraps help text with it

# Read by the console's templates (nonebot_plugin_yuji/console/templates).
SettingView.help
EvidenceItem.fragment_messages
MemoryVersion.changed_at
Travels.into  # person.html: what a wake about the member here would be carried

Settings.allow_unauthenticated_onebot  # bot.py reads it from NoneBot's config
IngestAdapter._handle_ws  # NoneBot's websocket server calls it
