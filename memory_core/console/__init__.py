"""The web console's core side: reads, audited changes, tunables and auth bookkeeping
(no web framework here; the plugin serves it)."""

from memory_core.storage import MemoryFilter as MemoryFilter

from .auth import LoginThrottle as LoginThrottle
from .auth import Session as Session
from .auth import Sessions as Sessions
from .auth import csrf_matches as csrf_matches
from .auth import token_matches as token_matches
from .service import ACTIONS as ACTIONS
from .service import ConsoleService as ConsoleService
from .tunables import TUNABLES as TUNABLES
from .tunables import Origin as Origin
from .views import Actor as Actor
from .views import MemoryDetail as MemoryDetail
from .views import Overview as Overview

__all__ = [
    "ACTIONS",
    "TUNABLES",
    "Actor",
    "ConsoleService",
    "LoginThrottle",
    "MemoryDetail",
    "MemoryFilter",
    "Origin",
    "Overview",
    "Session",
    "Sessions",
    "csrf_matches",
    "token_matches",
]
