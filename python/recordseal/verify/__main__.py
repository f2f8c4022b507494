"""``python -m recordseal.verify BUNDLE [--keys FILE] [--trust FILE] [--json]``."""

import sys

from .cli import main

sys.exit(main())
