import sys

from opt_suite.cli import main

sys.exit(main())
