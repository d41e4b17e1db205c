"""`python -m bench`: see bench/runner.py."""

from __future__ import annotations

import sys

from bench.runner import main

sys.exit(main())
