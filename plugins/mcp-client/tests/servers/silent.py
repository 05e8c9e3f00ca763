"""Reads its stdin and never answers (nor exits while stdin is open)."""

import sys

print("silent server: I will never answer", file=sys.stderr, flush=True)
for _line in sys.stdin:
    pass
