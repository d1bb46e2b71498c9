"""``python -m pytest_mlir_snippets.worker TARGET``: the sandbox worker's entry point."""

import sys

from pytest_mlir_snippets.worker.loop import main

sys.exit(main())
