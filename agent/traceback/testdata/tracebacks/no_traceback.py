import sys

print("warning: something odd", file=sys.stderr)
sys.exit(3)
