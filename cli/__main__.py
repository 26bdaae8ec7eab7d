"""`python -m cli ...`: see cli/main.py."""

import sys

from cli.main import main

sys.exit(main())
