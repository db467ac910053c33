"""``python -m reward_memory`` runs the CLI."""

import sys

from reward_memory.cli import main

sys.exit(main())
