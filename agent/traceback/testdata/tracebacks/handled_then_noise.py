import sys
import traceback

try:
    1 / 0
except ZeroDivisionError:
    traceback.print_exc()
print("still running", file=sys.stderr)
print("", file=sys.stderr)
print("done", file=sys.stderr)
