"""Follow-ups: a member's own dated plans the persona may ask about once their day has
passed (docs/design.md#follow-ups): what is due (due.py, pure) and the service over the
store (service.py)."""

from .due import FollowUp as FollowUp
from .due import Window as Window
from .service import FollowUps as FollowUps
from .unprompted import Asked as Asked
from .unprompted import Unprompted as Unprompted
