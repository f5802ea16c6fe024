"""``python -m marinesim``: the same command line as ``marinesim``."""

import sys

from marinesim.cli.main import main

sys.exit(main())
