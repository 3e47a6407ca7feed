"""The fault-injection suite: every test feeds the suite a hostile input or event and asserts
"a clear error or a correct result, never a wrong result with exit 0, never a traceback or a hang".

The helpers of the main test folder (``report_fakes``, ``runner_support``) are shared.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
