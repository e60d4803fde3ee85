"""`python -m evalspec_rs ...` is the `evalspec` command."""

from ._cli import main

if __name__ == "__main__":
    main()
