"""
Test Results Parser

Reads the stdout and stderr of run_script.sh and writes the tests it ran
as JSON: {"tests": [{"name": "...", "status": "PASSED|FAILED|SKIPPED|ERROR"}]}
"""

import dataclasses
import json
import re
import sys
from enum import Enum
from pathlib import Path
from typing import List


class TestStatus(Enum):
    PASSED = 1
    FAILED = 2
    SKIPPED = 3
    ERROR = 4


@dataclasses.dataclass
class TestResult:
    name: str
    status: TestStatus


def parse_test_output(stdout_content: str, stderr_content: str) -> List[TestResult]:
    results = []
    pattern = r'^([^\s]+::[^\s]+)\s+(PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS)'
    for line in stdout_content.split('\n'):
        match = re.match(pattern, line.strip())
        if not match:
            continue
        status = {'PASSED': TestStatus.PASSED, 'XFAIL': TestStatus.PASSED,
                  'FAILED': TestStatus.FAILED, 'XPASS': TestStatus.FAILED,
                  'SKIPPED': TestStatus.SKIPPED}.get(match.group(2), TestStatus.ERROR)
        results.append(TestResult(name=match.group(1), status=status))
    return results


def export_to_json(results: List[TestResult], output_path: Path) -> None:
    unique_results = {result.name: result for result in results}.values()
    json_results = {
        'tests': [
            {'name': result.name, 'status': result.status.name} for result in unique_results
        ]
    }
    with open(output_path, 'w') as f:
        json.dump(json_results, f, indent=2)


def main(stdout_path: Path, stderr_path: Path, output_path: Path) -> None:
    with open(stdout_path) as f:
        stdout_content = f.read()
    with open(stderr_path) as f:
        stderr_content = f.read()
    export_to_json(parse_test_output(stdout_content, stderr_content), output_path)


if __name__ == '__main__':
    if len(sys.argv) != 4:
        print('Usage: python parser.py <stdout_file> <stderr_file> <output_json>')
        sys.exit(1)
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
