"""`python -m tooling.cli`: the `livefreq` command without the console script."""

import sys

from tooling.cli import main

sys.exit(main())
