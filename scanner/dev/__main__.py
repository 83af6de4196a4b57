"""``python -m scanner.dev``: see scanner/dev/__init__.py."""

from scanner.dev.commands import main

raise SystemExit(main())
