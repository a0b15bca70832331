"""``python -m wean``: the ``wean`` command (torchrun, for one, launches modules this way)."""

import sys

from wean.cli import main

sys.exit(main())
