"""``python -m bob_boost.cli``: the same as the ``bob-boost`` script."""
from . import main

raise SystemExit(main())
