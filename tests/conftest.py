"""The tests folder itself is importable from every test folder: kits shared by several of them live here."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # for `cpp_kit` (the folders' own kits are found beside their tests)
