"""`python -I -u -m sandbox.harness EVENTS_FD < job.json`: one job in a fresh interpreter."""

import sys

from sandbox.harness.main import main

sys.exit(main(sys.argv))
