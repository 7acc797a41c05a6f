"""``python -m dplr``: command-line tools (``python -m dplr reproduce --help``)."""
import sys

from dplr.replication.cli import main

if __name__ == "__main__":
    sys.exit(main())
