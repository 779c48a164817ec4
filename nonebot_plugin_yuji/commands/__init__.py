"""One module per slash command (docs/chat-commands.md); `_common` holds what they share."""

from . import backfill as backfill
from . import backup as backup
from . import cards as cards
from . import carry as carry
from . import followups as followups
from . import forget as forget
from . import forget_me as forget_me
from . import mute as mute
from . import recall as recall
from . import remember as remember
from . import status as status
from . import unmute as unmute
from . import why as why
