"""Ray clusters of these tests run on this machine alone: they listen on the loopback address only."""

from __future__ import annotations

import os

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
