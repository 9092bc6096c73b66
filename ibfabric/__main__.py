import sys

from ibfabric.cli import main

sys.exit(main())
