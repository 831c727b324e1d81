"""Secret scrubbing for everything that is stored or exported: verdict output tails, trajectory events, datasets.

Candidate code runs in workers with a cleaned environment (`verify.clean_env`), but a secret can still reach text
we keep: a model that echoes a key it saw, a tool's log, a worker started by other code. Two kinds of text are
replaced by `[redacted:…]` before storage or export: the values of this process's credential-like environment
variables (`*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, ...; eight characters or more), and strings shaped like
common API tokens (OpenAI, Anthropic, Hugging Face, GitHub, AWS, Google, Slack, bearer tokens, JWTs) or like
credentials inside a URL. Standard library only, imported by the verifier, the store and the exporters alike.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TypeVar

__all__ = ["scrub", "scrub_json", "secret_values"]

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)
_MIN_SECRET = 8
"""Shorter values (a flag, a port) are too common in ordinary text to replace."""

_START = r"(?<![A-Za-z0-9_-])"
"""A token starts a word: `task-…` does not hold an `sk-…` key."""
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((what, re.compile(_START + body)) for what, body in (
    ("anthropic-key", r"sk-ant-[A-Za-z0-9_-]{20,}"),
    ("openai-key", r"sk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}"),
    ("hf-token", r"hf_[A-Za-z0-9]{30,}"),
    ("github-token", r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"),
    ("aws-key", r"(?:AKIA|ASIA)[0-9A-Z]{16}"),
    ("google-key", r"AIza[0-9A-Za-z_-]{35}"),
    ("slack-token", r"xox[abprs]-[A-Za-z0-9-]{10,}"),
    ("jwt", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("bearer", r"(?<=Bearer )[A-Za-z0-9._~+/=-]{20,}"),
))
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^/\s:@]+):(?P<secret>[^/\s@]+)@",
                              re.IGNORECASE)

T = TypeVar("T")


def secret_values(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Credential-like variables of `env` (this process's environment by default): value -> name."""
    env = os.environ if env is None else env
    return {v: k for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= _MIN_SECRET}


def scrub(text: str, env: Mapping[str, str] | None = None) -> str:
    """`text` with every secret of the module docstring replaced by `[redacted:<what>]`."""
    if not text:
        return text
    for value, name in sorted(secret_values(env).items(), key=lambda kv: -len(kv[0])):  # longest first
        if value in text:
            text = text.replace(value, f"[redacted:{name}]")
    for what, pattern in _PATTERNS:
        text = pattern.sub(f"[redacted:{what}]", text)
    return _URL_CREDENTIALS.sub(lambda m: f"{m['scheme']}{m['user']}:[redacted:url-password]@", text)


def scrub_json(value: T, env: Mapping[str, str] | None = None) -> T:
    """Every string inside a JSON-like value (dicts, lists, strings; keys included) scrubbed; other values as
    they are. Returns a new value; the input is not changed."""
    if isinstance(value, str):
        return scrub(value, env)  # type: ignore[return-value]
    if isinstance(value, dict):
        return {scrub(k, env) if isinstance(k, str) else k: scrub_json(v, env)  # type: ignore[return-value]
                for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_json(v, env) for v in value]  # type: ignore[return-value]
    return value
