"""The storage layer: all of yuji's SQL.

The shared parts sit here (the engine, the schema and its column types, failures,
migrations, the repository base, dialect helpers, the backend's description); each
concept's tables and queries sit in a subpackage named like the domain package above
it (`archive/`, `memories/`, `consolidation/`, ...), and what only PostgreSQL has in
`postgres/`. The rest of memory_core imports from this package, never from a
subpackage (tests/test_layering.py holds it to that), so a module can move inside
`storage/` without its callers noticing.
"""

from .archive import message_index as message_index
from .archive.archive_repo import Appended as Appended
from .archive.archive_repo import ArchiveCounts as ArchiveCounts
from .archive.archive_repo import ArchiveRepo as ArchiveRepo
from .archive.archive_repo import LinkedAttachment as LinkedAttachment
from .archive.chatrecorder_repo import GROUP as GROUP
from .archive.chatrecorder_repo import ChatrecorderReader as ChatrecorderReader
from .archive.chatrecorder_repo import RecordRow as RecordRow
from .archive.heard import Heard as Heard
from .archive.message_search import MessageSearch as MessageSearch
from .archive.message_search import Unembedded as Unembedded
from .archive.message_search import Window as Window
from .chat.chat_repo import ChatRepo as ChatRepo
from .chat.chat_repo import ChatState as ChatState
from .chat.chat_repo import InjectedBlock as InjectedBlock
from .chat.chat_repo import InjectedItem as InjectedItem
from .chat.chat_repo import InjectedQuote as InjectedQuote
from .chat.chat_repo import Injection as Injection
from .chat.names_repo import ChatNames as ChatNames
from .console.console_repo import AuditEntry as AuditEntry
from .console.console_repo import ChatCounts as ChatCounts
from .console.console_repo import ConsoleRepo as ConsoleRepo
from .console.console_repo import MemoryFilter as MemoryFilter
from .console.console_repo import RelationRow as RelationRow
from .consolidation.consolidation_repo import Backlog as Backlog
from .consolidation.consolidation_repo import Batch as Batch
from .consolidation.consolidation_repo import ConsolidationRepo as ConsolidationRepo
from .consolidation.consolidation_repo import Cursor as Cursor
from .consolidation.consolidation_repo import CursorFix as CursorFix
from .consolidation.consolidation_repo import Cut as Cut
from .consolidation.consolidation_repo import Failed as Failed
from .consolidation.consolidation_repo import Fragment as Fragment
from .consolidation.consolidation_repo import Pending as Pending
from .deployment.deployment_repo import DeploymentRepo as DeploymentRepo
from .deployment.leader_lock import LeaderLock as LeaderLock
from .deployment.leader_lock import leader_lock as leader_lock
from .followups.followups_repo import FollowupRecord as FollowupRecord
from .followups.followups_repo import FollowupsRepo as FollowupsRepo
from .followups.followups_repo import PlanRow as PlanRow
from .memories.memory_repo import GcCandidate as GcCandidate
from .memories.memory_repo import MemoryRepo as MemoryRepo
from .memories.memory_repo import MemoryText as MemoryText
from .nightly.nightly_health_repo import NightlyHealthRepo as NightlyHealthRepo
from .nightly.nightly_health_repo import ScopeHealth as ScopeHealth
from .nightly.nightly_repo import Card as Card
from .nightly.nightly_repo import Diary as Diary
from .nightly.nightly_repo import NightlyRepo as NightlyRepo
from .nightly.nightly_repo import StepRow as StepRow
from .nightly.nightly_repo import TimelineEntry as TimelineEntry
from .ops import ops_repo as ops_repo
from .ops.alert_repo import AlertRecord as AlertRecord
from .ops.alert_repo import AlertRepo as AlertRepo
from .ops.ops_repo import OpsRepo as OpsRepo
from .ops.ops_repo import StoredAttachment as StoredAttachment
from .ops.usage_repo import JobTotals as JobTotals
from .ops.usage_repo import UsageRepo as UsageRepo
from .ops.usage_repo import UsageRow as UsageRow
from .ops.vision_repo import QueuedImage as QueuedImage
from .ops.vision_repo import VisionRepo as VisionRepo
from .people.carry_repo import CarryBlock as CarryBlock
from .people.carry_repo import CarryChoice as CarryChoice
from .people.carry_repo import CarryRepo as CarryRepo
from .people.carry_repo import Membership as Membership
from .people.people_repo import AliasRow as AliasRow
from .people.people_repo import ChatPerson as ChatPerson
from .people.people_repo import PeopleRepo as PeopleRepo
from .people.people_repo import Person as Person
from .people.people_repo import PersonName as PersonName
from .people.people_write import NameSeen as NameSeen
from .people.people_write import PersonSeen as PersonSeen
from .people.person_cards_repo import MemberMemory as MemberMemory
from .people.person_cards_repo import PersonCard as PersonCard
from .people.person_cards_repo import PersonCardsRepo as PersonCardsRepo
from .people.person_cards_repo import PromptPeople as PromptPeople
from .porting import copy_repo as copy_repo
from .porting.copy_repo import COPIED as COPIED
from .porting.copy_repo import TableProgress as TableProgress
from .porting.copy_repo import store_name as store_name
from .porting.pack_repo import PackRepo as PackRepo
from .porting.pack_repo import PackRows as PackRows
from .porting.porting_repo import PortingRepo as PortingRepo
from .porting.redaction_repo import TOMBSTONE as TOMBSTONE
from .porting.redaction_repo import ForgetRequest as ForgetRequest
from .porting.redaction_repo import RedactionRepo as RedactionRepo
from .postgres import pg_dump as pg_dump
from .postgres import pg_server as pg_server
from .postgres.pg_dump import Tools as Tools
from .postgres.pg_dump import find_tools as find_tools
from .vectors.pgvector import PgvectorRepo as PgvectorRepo
from .vectors.pgvector import searchable as searchable
from .vectors.vector_repo import Build as Build
from .vectors.vector_repo import VectorRepo as VectorRepo
from .vectors.vector_repo import VectorRow as VectorRow
