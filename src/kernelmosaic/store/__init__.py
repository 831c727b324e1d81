"""The store stage: runs, episodes, every trajectory event, verdicts and verified solutions, in SQL.

SQLite in the working directory by default, PostgreSQL by URL; `open_store()` is the entry point.
"""

from kernelmosaic.store.backends import DEFAULT_URL, default_url, register_backend
from kernelmosaic.store.errors import EventConflictError, NotFoundError, StoreError
from kernelmosaic.store.records import Episode, EpisodeInfo, RunInfo, RunSummary
from kernelmosaic.store.results import candidate_sha256
from kernelmosaic.store.store import Store, open_store

__all__ = [
    "DEFAULT_URL",
    "default_url",
    "register_backend",
    "open_store",
    "Store",
    "StoreError",
    "NotFoundError",
    "EventConflictError",
    "RunInfo",
    "EpisodeInfo",
    "Episode",
    "RunSummary",
    "candidate_sha256",
]
