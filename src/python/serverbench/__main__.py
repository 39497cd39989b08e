import sys

from serverbench.cli import main

sys.exit(main())
