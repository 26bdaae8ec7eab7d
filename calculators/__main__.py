"""`python -m calculators ...`: see calculators/cli.py."""

import sys

from calculators.cli import main

sys.exit(main())
