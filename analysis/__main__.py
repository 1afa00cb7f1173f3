import os
import sys

from analysis.cli import INTERRUPTED, main

status = main()
if status == INTERRUPTED:
    # Exit now, with the status the error line promised. A Ctrl-C that lands while an import
    # runs code through PyRun_String leaves CPython's "unhandled KeyboardInterrupt" mark set,
    # even once cli.main has handled it; the normal exit then kills the process with SIGINT
    # instead (status -2; seen in tests/test_faults.py). The workers are stopped already.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
sys.exit(status)
