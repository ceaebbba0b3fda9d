import sys

from ef.cli import main

sys.exit(main())
