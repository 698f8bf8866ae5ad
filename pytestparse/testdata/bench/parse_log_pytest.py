"""Stand-in for the official SWE-bench harness's parse_log_pytest (v4.1.0,
swebench/harness/log_parsers), written from ../../../../shared/reference
section 2: for each line starting with a status word, FAILED lines get
" - " replaced by " ", the line is split on whitespace and map[tok[1]] =
tok[0]. The file is read the way the harness's grading reads
test_output.txt (open().read()), and the time covers reading and parsing.

    python3 parse_log_pytest.py LOG   ->  {"seconds": ..., "bytes": ..., "tests": ...}
"""
import json
import os
import sys
import time
from enum import Enum


class TestStatus(Enum):
    FAILED = "FAILED"
    PASSED = "PASSED"
    SKIPPED = "SKIPPED"
    ERROR = "ERROR"
    XFAIL = "XFAIL"


def parse_log_pytest(log: str, test_spec=None) -> dict:
    test_status_map = {}
    for line in log.split("\n"):
        if any([line.startswith(x.value) for x in TestStatus]):
            # Additional parsing for FAILED status
            if line.startswith(TestStatus.FAILED.value):
                line = line.replace(" - ", " ")
            test_case = line.split()
            if len(test_case) <= 1:
                continue
            test_status_map[test_case[1]] = test_case[0]
    return test_status_map


def main() -> None:
    path = sys.argv[1]
    start = time.perf_counter()
    with open(path) as f:
        content = f.read()
    result = parse_log_pytest(content)
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "bytes": os.path.getsize(path), "tests": len(result)}))


if __name__ == "__main__":
    main()
