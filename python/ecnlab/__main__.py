from .cli import main

# Guarded: worker processes started by spawn import this module under another name.
if __name__ == "__main__":
    raise SystemExit(main())
