import sys

import serverbench

serverbench.use_portable_numpy_kernels()  # before numpy's import: committed files are the same on any CPU

from serverbench.cli import main  # noqa: E402

sys.exit(main())
