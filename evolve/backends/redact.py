"""Remove secrets (API keys, credentials inside URLs) from text before it is shown or stored."""

from __future__ import annotations

import os
import re

_URL_CREDENTIALS = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s@]+@")
_QUERY_SECRET = re.compile(r"(?i)(?P<key>[?&](?:api[_-]?key|key|token|access_token|secret|password)=)[^&\s]+")
_KEY_LIKE = re.compile(r"\b(?:sk|rk|hf|gsk|xai)[-_][A-Za-z0-9_\-]{12,}\b")
_BEARER = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}")
_SECRET_ENV_SUFFIXES = ("_API_KEY", "_KEY", "_TOKEN", "_SECRET", "_PASSWORD")

MASK = "***"


def _env_secrets() -> list[str]:
    return [
        value
        for name, value in os.environ.items()
        if name.upper().endswith(_SECRET_ENV_SUFFIXES) and len(value) >= 8
    ]


def redact(text: str, extra: tuple[str, ...] = ()) -> str:
    """`text` with URL credentials, key-like tokens, secret query parameters and known secret values masked.

    `extra` lists further literal secrets (for example an `api_key` passed explicitly).
    """
    if not text:
        return text
    for secret in (*extra, *_env_secrets()):
        if secret and len(secret) >= 4:
            text = text.replace(secret, MASK)
    text = _URL_CREDENTIALS.sub(lambda m: f"{m.group('scheme')}{MASK}@", text)
    text = _QUERY_SECRET.sub(lambda m: f"{m.group('key')}{MASK}", text)
    text = _BEARER.sub(lambda m: f"{m.group(1)}{MASK}", text)
    return _KEY_LIKE.sub(MASK, text)
