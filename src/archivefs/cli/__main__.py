"""``python -m archivefs.cli``: the ``archivefs`` command."""

from archivefs.cli.app import main

if __name__ == "__main__":  # pragma: no cover
    main()
