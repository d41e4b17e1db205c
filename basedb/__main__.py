from __future__ import annotations

from basedb.cli import main

if __name__ == "__main__":
    main()
