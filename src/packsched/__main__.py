"""``python -m packsched``: the ``packsched`` command."""

from packsched.cli.main import main

if __name__ == "__main__":
    main()
