"""Exits before answering anything, explaining why on stderr."""

import sys

print("starting up", file=sys.stderr)
print("fatal: TOY_TOKEN is not set; cannot start", file=sys.stderr)
sys.exit(3)
