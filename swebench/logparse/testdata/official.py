"""Python transcription of the official SWE-bench log parsers, for the
differential test in differential_test.go.

The Go parsers reimplement Python's str and re semantics (split, strip,
\\s, \\d, leftmost-first matching); this file runs the same rules in Python
itself so both can be compared on generated logs. It reads a JSON list of
{"parser", "rules", "log"} on stdin and writes a JSON list of results
({"map": {...}} or {"error": "..."}) on stdout.

Rules follow swebench/harness/log_parsers at v4.1.0 and v5 as described in
shared/reference/swebench-harness.md (v5 details from the 5.0.2 sources:
_is_skip_summary, pytest_v2 full names, the seaborn guard, jest's stripped
names, maven's first-in-first-out pairing, gradle's status on its own line,
and the JavaScript parsers 5.0.2 added). A case may carry a "target"
({"instance_id", "version"}) for the dispatching parsers.
"""
import json
import re
import sys
import xml.etree.ElementTree as ET

STATUSES = ["FAILED", "PASSED", "SKIPPED", "ERROR", "XFAIL"]
SKIP_COUNT = re.compile(r"^\[\d+\]$")


def is_skip_summary(status, name):
    return status == "SKIPPED" and bool(SKIP_COUNT.match(name))


def pytest(log, v5):
    m = {}
    for line in log.split("\n"):
        if any(line.startswith(x) for x in STATUSES):
            if line.startswith("FAILED"):
                line = line.replace(" - ", " ")
            tc = line.split()
            if len(tc) <= 1:
                continue
            if v5 and is_skip_summary(tc[0], tc[1]):
                continue
            m[tc[1]] = tc[0]
    return m


def pytest_options(log, v5):
    option_pattern = re.compile(r"(.*?)\[(.*)\]")
    m = {}
    for line in log.split("\n"):
        if any(line.startswith(x) for x in STATUSES):
            if line.startswith("FAILED"):
                line = line.replace(" - ", " ")
            tc = line.split()
            if len(tc) <= 1:
                continue
            if v5 and is_skip_summary(tc[0], tc[1]):
                continue
            has_option = option_pattern.search(tc[1])
            if has_option:
                main, option = has_option.groups()
                if option.startswith("/") and not option.startswith("//") and "*" not in option:
                    option = "/" + option.split("/")[-1]
                name = f"{main}[{option}]"
            else:
                name = tc[1]
            m[name] = tc[0]
    return m


def pytest_v2(log, v5):
    m = {}
    escapes = "".join(chr(c) for c in range(1, 32))
    translator = str.maketrans("", "", escapes)
    for line in log.split("\n"):
        line = re.sub(r"\[(\d+)m", "", line)
        line = line.translate(translator)
        if any(line.startswith(x) for x in STATUSES):
            if line.startswith("FAILED"):
                line = line.split(" - ", 1)[0] if v5 else line.replace(" - ", " ")
            tc = line.split()
            if len(tc) >= 2:
                if v5:
                    if not is_skip_summary(tc[0], tc[1]):
                        m[" ".join(tc[1:])] = tc[0]
                else:
                    m[tc[1]] = tc[0]
        elif any(line.endswith(x) for x in STATUSES):
            tc = line.split()
            if len(tc) >= 2:
                if v5:
                    m[" ".join(tc[:-1])] = tc[-1]
                else:
                    m[tc[0]] = tc[1]
    return m


def matplotlib(log, v5):
    m = {}
    for line in log.split("\n"):
        line = line.replace("MouseButton.LEFT", "1")
        line = line.replace("MouseButton.RIGHT", "3")
        if any(line.startswith(x) for x in STATUSES):
            if line.startswith("FAILED"):
                line = line.replace(" - ", " ")
            tc = line.split()
            if len(tc) <= 1:
                continue
            if v5 and is_skip_summary(tc[0], tc[1]):
                continue
            m[tc[1]] = tc[0]
    return m


def seaborn(log, v5):
    m = {}
    for line in log.split("\n"):
        if v5 and len(line.split()) < 2:
            continue
        if line.startswith("FAILED"):
            m[line.split()[1]] = "FAILED"
        elif " PASSED " in line:
            parts = line.split()
            if parts[1] == "PASSED":
                m[parts[0]] = "PASSED"
        elif line.startswith("PASSED"):
            parts = line.split()
            m[parts[1]] = "PASSED"
    return m


def sympy(log, v5):
    m = {}
    for match in re.findall(r"(_*) (.*)\.py:(.*) (_*)", log):
        m[f"{match[1]}.py:{match[2]}"] = "FAILED"
    for line in log.split("\n"):
        line = line.strip()
        if line.startswith("test_"):
            if line.endswith(" E"):
                m[line.split()[0]] = "ERROR"
            if line.endswith(" F"):
                m[line.split()[0]] = "FAILED"
            if line.endswith(" ok"):
                m[line.split()[0]] = "PASSED"
    return m


def django(log, v5):
    m = {}
    prev_test = None
    for line in log.split("\n"):
        line = line.strip()
        if "--version is equivalent to version" in line:
            m["--version is equivalent to version"] = "PASSED"
        if " ... " in line:
            prev_test = line.split(" ... ")[0]
        for suffix in (" ... ok", " ... OK", " ...  OK"):
            if line.endswith(suffix):
                if line.strip().startswith("Applying sites.0002_alter_domain_unique...test_no_migrations"):
                    line = line.split("...", 1)[-1].strip()
                m[line.rsplit(suffix, 1)[0]] = "PASSED"
                break
        if " ... skipped" in line:
            m[line.split(" ... skipped")[0]] = "SKIPPED"
        if line.endswith(" ... FAIL"):
            m[line.split(" ... FAIL")[0]] = "FAILED"
        if line.startswith("FAIL:"):
            m[line.split()[1].strip()] = "FAILED"
        if line.endswith(" ... ERROR"):
            m[line.split(" ... ERROR")[0]] = "ERROR"
        if line.startswith("ERROR:"):
            m[line.split()[1].strip()] = "ERROR"
        if line.lstrip().startswith("ok") and prev_test is not None:
            m[prev_test] = "PASSED"
    patterns = [
        r"^(.*?)\s\.\.\.\sTesting\ against\ Django\ installed\ in\ ((?s:.*?))\ silenced\)\.\nok$",
        r"^(.*?)\s\.\.\.\sInternal\ Server\ Error:\ \/(.*)\/\nok$",
        r"^(.*?)\s\.\.\.\sSystem check identified no issues \(0 silenced\)\nok$",
    ]
    for pattern in patterns:
        for match in re.finditer(pattern, log, re.MULTILINE):
            m[match.group(1)] = "PASSED"
    return m


def gotest(log, v5):
    m = {}
    for line in log.split("\n"):
        match = re.match(r"^--- (PASS|FAIL|SKIP): (.+) \((.+)\)$", line.strip())
        if match:
            status, name, _ = match.groups()
            m[name] = {"PASS": "PASSED", "FAIL": "FAILED", "SKIP": "SKIPPED"}[status]
    return m


def cargo(log, v5):
    m = {}
    for line in log.split("\n"):
        match = re.match(r"^test\s+(\S+)\s+\.\.\.\s+(\w+)$", line.strip())
        if match:
            name, outcome = match.groups()
            if outcome == "ok":
                m[name] = "PASSED"
            elif outcome == "FAILED":
                m[name] = "FAILED"
    return m


def jest(log, v5):
    m = {}
    for line in log.split("\n"):
        match = re.match(r"^\s*(✓|✕|○)\s(.+?)(?:\s\((\d+\s*m?s)\))?$", line.strip())
        if match:
            sym, name, _ = match.groups()
            if v5:  # 5.0.2 strips the name; 4.1.0 keeps "name " before a timing
                name = name.strip()
            m[name] = {"✓": "PASSED", "✕": "FAILED", "○": "SKIPPED"}[sym]
    return m


def vitest(log, v5):
    m = {}
    for line in log.split("\n"):
        match = re.match(r"^\s*(✓|×|↓)\s(.+?)(?:\s(\d+\s*m?s?|\[skipped\]))?$", line.strip())
        if match:
            sym, name, _ = match.groups()
            m[name] = {"✓": "PASSED", "×": "FAILED", "↓": "SKIPPED"}[sym]
    return m


def tap(log, v5):
    m = {}
    for line in log.split("\n"):
        match = re.match(r"^(ok|not ok) (\d+) (.+)$", line.strip())
        if match:
            status, _, name = match.groups()
            m[name] = "PASSED" if status == "ok" else "FAILED"
    return m


def karma(log, v5):
    m = {}
    current_indent = -1
    current_suite = []
    started = False
    for line in log.split("\n"):
        if line.startswith("SUMMARY:"):
            return m
        if "Starting browser" in line:
            started = True
            continue
        if not started:
            continue
        match = re.match(r"^(\s*)?([✔✖])?\s(.*)$", line)
        if match:
            indent, status, name = match.groups()
            if indent and not status:
                new_indent = len(indent)
                if new_indent > current_indent:
                    current_indent = new_indent
                    current_suite.append(name)
                elif new_indent < current_indent:
                    current_indent = new_indent
                    current_suite.pop()
                    continue
            if status in ("✔", "✖"):
                m[" > ".join(current_suite + [name])] = "PASSED" if status == "✔" else "FAILED"
    return m


def marked(log, v5):
    m = {}
    for line in log.split("\n"):
        if re.search(r"^\d+\)\s(.*)", line):
            m[re.search(r"^\d+\)\s(.*)", line).group(1).strip()] = "FAILED"
    return m


def ansi_escape(text):
    return re.compile(r"\x1B(?:[@-Z\\-_]|\[[0-?]*[ -/]*[@-~])").sub("", text)


def chart_js(log, v5):
    log = ansi_escape(log)
    m = {}
    for failure in re.findall(r"Chrome\s[\d\.]+[^\S\r\n]\(.+?\)[^\S\r\n](.*)FAILED$", log, re.MULTILINE):
        m[failure] = "FAILED"
    return m


def react_pdf(log, v5):
    m = {}
    for line in log.split("\n"):
        for pattern, status in [
            (r"^PASS\s(.*)\s\([\d\.]+ms\)", "PASSED"),
            (r"^PASS\s(.*)\s\([\d\.]+\ss\)", "PASSED"),
            (r"^PASS\s(.*)\s\([\d\.]+s\)", "PASSED"),
            (r"^PASS\s(.*)", "PASSED"),
            (r"^FAIL\s(.*)\s\([\d\.]+ms\)", "FAILED"),
            (r"^FAIL\s(.*)\s\([\d\.]+\ss\)", "FAILED"),
            (r"^FAIL\s(.*)\s\([\d\.]+s\)", "FAILED"),
            (r"^FAIL\s(.*)", "FAILED"),
        ]:
            if re.search(pattern, line):
                m[re.match(pattern, line).group(1)] = status
                break
    return m


def calypso(log, v5):
    m = {}
    suite = []

    def get_test_name(suite, match_pattern, line):
        return " - ".join([" - ".join([x[0] for x in suite]), re.match(match_pattern, line).group(1)]).strip()

    for chunk in log.split(" ./node_modules/.bin/jest ")[1:]:
        for line in chunk.split("\n"):
            if any(line.startswith(x) for x in ["Test Suites", "  ● "]):
                break
            elif line.strip().startswith("✓"):
                p = r"^\s+✓\s(.*)\(\d+ms\)$" if re.search(r"\(\d+ms\)", line) is not None else r"^\s+✓\s(.*)"
                m[get_test_name(suite, p, line)] = "PASSED"
            elif line.strip().startswith("✕"):
                p = r"^\s+✕\s(.*)\(\d+ms\)$" if re.search(r"\(\d+ms\)", line) is not None else r"^\s+✕\s(.*)"
                m[get_test_name(suite, p, line)] = "FAILED"
            elif len(line) - len(line.lstrip()) > 0:
                indent = len(line) - len(line.lstrip())
                if len(suite) == 0:
                    suite = [(line.strip(), indent)]
                else:
                    while len(suite) > 0 and suite[-1][-1] >= indent:
                        suite.pop()
                    suite.append([line.strip(), indent])
    return m


def p5js(log, v5):
    def remove_json_blocks(content):
        out = []
        in_obj = in_list = False
        for line in content.split("\n"):
            s = line.rstrip()
            if s.endswith("{"):
                in_obj = True
                continue
            if s.endswith("["):
                in_list = True
                continue
            if s == "}" and in_obj:
                in_obj = False
                continue
            if s == "]" and in_list:
                in_list = False
                continue
            if in_obj or in_list:
                continue
            if s.startswith("{") and s.endswith("}"):
                continue
            if s.startswith("[") and s.endswith("]"):
                continue
            out.append(line)
        return "\n".join(out)

    def remove_xml_blocks(content):
        pat = re.compile(r"<(\w+)>[\s\S]*?<\/\1>", re.MULTILINE)
        match = pat.search(content)
        while match:
            n = max(match.group().count(rf"<{match.group(1)}>") - 1, 0)
            content = content[: match.start()] + f"<{match.group(1)}>" * n + content[match.end():]
            match = pat.search(content)
        return content

    def is_valid_fail(match):
        last = 0
        for line in match.group(2).split("\n"):
            indent = len(line) - len(line.lstrip())
            if indent <= last:
                return False
            last = indent
        return True

    log = ansi_escape(log)
    log = remove_json_blocks(log)
    log = remove_xml_blocks(log)
    m = {}
    for match in re.compile(r"^\s*(\d+)\)(.{0,1000}?):", re.MULTILINE | re.DOTALL).finditer(log):
        if is_valid_fail(match):
            m[":".join(map(str.strip, match.group(2).split("\n")))] = "FAILED"
    return m


def maven(log, v5):
    m = {}
    if not v5:  # 4.1.0: the most recent -Dtest= name
        current = "---NO TEST NAME FOUND YET---"
        for line in log.split("\n"):
            t = re.match(r"^.*-Dtest=(\S+).*$", line.strip())
            if t:
                current = t.groups()[0]
            r = re.match(r"^.*BUILD (SUCCESS|FAILURE)$", line.strip())
            if r:
                m[current] = "PASSED" if r.groups()[0] == "SUCCESS" else "FAILED"
        return m
    pending, unmatched = [], []
    for line in log.split("\n"):
        t = re.match(r"^.*-Dtest=(\S+).*$", line.strip())
        if t:
            pending.append(t.groups()[0])
        r = re.match(r"^.*BUILD (SUCCESS|FAILURE)$", line.strip())
        if r:
            if pending:
                name = pending.pop(0)
                m[name] = "PASSED" if r.groups()[0] == "SUCCESS" else "FAILED"
            else:
                unmatched.append(r.groups()[0])
    while pending and unmatched:
        name = pending.pop(0)
        m[name] = "PASSED" if unmatched.pop(0) == "SUCCESS" else "FAILED"
    return m


def ant(log, v5):
    m = {}
    for line in log.split("\n"):
        match = re.match(r"^\s*\[junit\]\s+\[(PASS|FAIL|ERR)\]\s+(.*)$", line.strip())
        if match:
            status, name = match.groups()
            m[name] = "PASSED" if status == "PASS" else "FAILED"
    return m


def gradle_custom(log, v5):
    m = {}
    pending = None
    for line in log.split("\n"):
        s = line.strip()
        match = re.match(r"^([^>].+)\s+(PASSED|FAILED)$", s)
        if match:
            m[match.group(1)] = match.group(2)
            pending = None
            continue
        if not v5:  # 4.1.0 reads only the name-and-status line
            continue
        match = re.match(r"^([^>]\S*\s+>\s+\S+)$", s)
        if match:
            pending = match.group(1)
            continue
        if pending:
            match = re.match(r"^(PASSED|FAILED)$", s)
            if match:
                m[pending] = match.group(1)
                pending = None
    return m


def jest_json(log, v5):
    m = {}
    for line in log.split("\n"):
        match = re.match(r"^\[(PASSED|FAILED)\]\s(.+)$", line.strip())
        if match:
            m[match.group(2)] = match.group(1)
    return m


# C/C++, PHP and Ruby (c.py, php.py, ruby.py).


def line_map(log, pattern, outcomes, name_fn=None):
    """re.match of pattern on every stripped line; group 1 is the outcome
    token looked up in outcomes, group 2 the name (tokens not in outcomes
    record nothing)."""
    m = {}
    for line in log.split("\n"):
        found = re.match(pattern, line.strip())
        if found and found.group(1) in outcomes:
            name = found.group(2)
            if name_fn:
                name = name_fn(found.group(1), name)
            m[name] = outcomes[found.group(1)]
    return m


def redis(log, v5):
    def drop_file(outcome, name):
        return re.sub(r"\s+in\s+\S+$", "", name) if outcome == "err" else name
    return line_map(log, r"^\[(ok|err|skip|ignore)\]:\s(.+?)(?:\s\((\d+\s*m?s)\))?$",
                    {"ok": "PASSED", "err": "FAILED", "skip": "SKIPPED", "ignore": "SKIPPED"}, drop_file)


def jq(log, v5):
    return line_map(log, r"^\s*(PASS|FAIL):\s(.+)$", {"PASS": "PASSED", "FAIL": "FAILED"})


def micropython_test(log, v5):
    return line_map(log, r"^(pass|FAIL|skip)\s+(.+)$", {"pass": "PASSED", "FAIL": "FAILED", "skip": "SKIPPED"})


def googletest(log, v5):
    return line_map(log, r"^.*\[\s*(OK|FAILED)\s*\]\s(.*)\s\(.*\)$", {"OK": "PASSED", "FAILED": "FAILED"})


def doctest(log, v5):
    m = {}
    first = log.find("<doctest")
    last = log.find("</doctest>", first) + len("</doctest>") if first != -1 else -1
    if first == -1 or last == -1:
        return m
    root = ET.fromstring(log[first:last])
    for case in root.findall(".//TestCase"):
        for sub in case.findall(".//SubCase"):
            ok = all(e.get("success") == "true" for e in sub.findall(".//Expression"))
            m[f"{case.get('name')} > {sub.get('name')}"] = "PASSED" if ok else "FAILED"
    return m


def phpunit(log, v5):
    m = {}
    suite = None
    for line in log.split("\n"):
        head = re.match(r"^(\w.+) \(.+\)$", line)
        if head:
            suite = head.group(1)
            continue
        test = re.match(r"^\s*([✔✘↩])\s*(.*)$", line)
        if test:
            m[f"{suite} > {test.group(2)}"] = {"✔": "PASSED", "✘": "FAILED", "↩": "SKIPPED"}[test.group(1)]
    return m


def swap(pattern, outcomes):
    """line_map for patterns whose name is group 1 and outcome group 2."""
    def parse(log, v5):
        m = {}
        for line in log.split("\n"):
            found = re.match(pattern, line.strip())
            if found and found.group(2) in outcomes:
                m[found.group(1)] = outcomes[found.group(2)]
        return m
    return parse


minitest = swap(r"^(.+)\. .*=.*(\.|F|E).*$", {".": "PASSED", "F": "FAILED", "E": "FAILED"})
cucumber = swap(r"^(.*) \.+(\.|F)", {".": "PASSED", "F": "FAILED"})
ruby_unit = swap(r"^\s*(?:test: )?(.+):\s+(\.|E\b|F\b|O\b)", {".": "PASSED", "E": "FAILED", "F": "FAILED", "O": "SKIPPED"})
rspec_transformed_json = swap(r"(.+) - (passed|failed)", {"passed": "PASSED", "failed": "FAILED"})


# JavaScript parsers added in 5.0.2 (javascript.py), the same under both
# rule sets. The dispatchers see an empty test_spec, as Lookup gives them.


def highlightjs(log, v5):
    log = re.split(r"\n[ \t]*\d+ passing", log)[0]
    m = {}
    current_suite = []
    remove_timing_str = lambda test_name: (
        re.sub(r"\(\d+ms\)", "", test_name).strip()
        if bool(re.search(r"\(\d+ms\)", test_name))
        else test_name.strip()
    )
    for line in log.split("\n"):
        if any([line.strip().startswith(x) for x in ["✓", "✔"]]):
            check = "✓" if line.strip().startswith("✓") else "✔"
            test_name = remove_timing_str(line.split(check, 1)[1])
            m[".".join(current_suite + [test_name])] = "PASSED"
        elif re.match(r"^\d+\)", line.strip()):
            test_name = remove_timing_str(line.split(")", 1)[1])
            m[".".join(current_suite + [test_name])] = "FAILED"
        elif line and line.startswith(" " * 2):
            current_suite = [line.strip()]
        elif line and not line.startswith(" " * 2) and line.startswith(" " * 4):
            current_suite.append(line.strip())
    return m


def prismjs(log, v5):
    m = {}
    for part in log.split("./node_modules/.bin/mocha tests/run.js --reporter json")[1:]:
        results = json.loads("{" + part.split("{", 1)[-1].rsplit("}", 1)[0] + "}")
        for test in results["failures"]:
            m[test["fullTitle"]] = "FAILED"
        for test in results["passes"]:
            m[test["fullTitle"]] = "PASSED"
    return m


def eslint(log, v5):
    m = {}
    for failure in re.findall(r"(\s{2}\d+\))([\s\S]*?)\s+(?:(.*)Error)", log):
        m[re.sub(r"\s+", " ", failure[1]).strip()] = "FAILED"
    return m


def bpmn_js(log, v5):
    m = {}
    for pattern in [
        r"2KPhantomJS\s[\d\.]+\s\(Linux\s[\d\.]+\)\s(.*)FAILED\n",
        r"2KPhantomJS\s[\d\.]+\s\(Linux\sx86\_64\)\s(.*)FAILED\n",
        r"Chrome\sHeadless\s(.*)\s\(Linux\sx86\_64\)\s(.*)FAILED\n",
        r"HeadlessChrome\s[\d\.]+\s\(Linux\s[\d\.]+\)\s(.*)FAILED\n",
    ]:
        for failure in re.findall(pattern, log):
            if isinstance(failure, tuple):
                failure = failure[1]
            m[failure] = "FAILED"
    return m


def openlayers(log, v5):
    m = {}
    for pattern in [
        r"Chrome\sHeadless\s[\d\.]+\s\(Linux\s[\d\.\_\S]+\)\s(.*)\sFAILED\n",
        r"Chrome\s[\d\.]+\s\(Linux\s[\d\.\_\S]+\)\s(.*)FAILED\n",
        r"^\s{2}\d+\)([\s\S]*?)Error:",
        r"^case\s(.*):\smismatch",
    ]:
        for failure in re.findall(pattern, log, re.MULTILINE):
            m[re.sub(r"\s+", " ", failure).strip()] = "FAILED"
    return m


def emotion(log, v5):
    m = {}
    for failure in re.findall(r"^FAIL\s(.*)", log, re.MULTILINE):
        m[failure.strip()] = "FAILED"
    for passing in re.findall(r"^PASS\s(.*)", log, re.MULTILINE):
        m[passing.strip()] = "PASSED"
    return m


def grommet(log, v5):
    timing = r"\s\([\d\.]+\s?(?:ms|s)\)$"
    m = {}
    for failure in re.findall(r"^FAIL\s(.*)", log, re.MULTILINE):
        m[re.sub(timing, "", failure.strip())] = "FAILED"
    for passing in re.findall(r"^PASS\s(.*)", log, re.MULTILINE):
        m[re.sub(timing, "", passing.strip())] = "PASSED"
    return m


def next_v1(log, v5):
    m = {}
    suite = []
    log = re.sub(r"\x1B(?:[@-Z\\-_]|\[[0-?]*[ -/]*[@-~])", "", log)
    log = re.sub(r"AssertionError:\s+#([\s\S]*?)\n\n", "", log, flags=re.DOTALL)
    fail_pattern = r".*?✗\s*(.*)"
    pass_pattern = r".*?✓\s*(.*)"
    for log in log.split(" xvfb-run ")[1:]:
        log = log.split("Starting browser Chrome")[-1]
        for line in log.split("\n"):
            if line.startswith("TOTAL"):
                break
            elif any([line.strip().startswith(x) for x in ["ERROR", "LOG", "WARN", "Check", "in"]]):
                continue
            elif re.match(fail_pattern, line) is not None:
                test = re.match(fail_pattern, line).group(1)
                m[" - ".join([x[0] for x in suite] + [test])] = "FAILED"
            elif re.match(pass_pattern, line) is not None:
                test = re.match(pass_pattern, line).group(1)
                m[" - ".join([x[0] for x in suite] + [test])] = "PASSED"
            elif len(line) - len(line.lstrip()) > 0:
                indent = len(line) - len(line.lstrip())
                if len(suite) == 0:
                    suite = [(line.strip(), indent)]
                else:
                    while len(suite) > 0 and suite[-1][-1] >= indent:
                        suite.pop()
                    suite.append([line.strip(), indent])
    return m


def next_v2(log, v5):
    m = {}
    pattern = r"Running\:(.*)\)\n{3}\s{2}(.*)\n"
    split = re.split(pattern, log)
    suites = re.findall(pattern, log)
    for idx, suite in enumerate(suites):
        suite = suite[-1]
        part = split[(idx + 1) * 3]
        for failure in re.findall(r"^\s{4}\d+\)\s(.*)", part, re.MULTILINE):
            m[f"{suite}: {failure.strip()}"] = "FAILED"
        for success in re.findall(r"^\s{4}✓\s(.*)\(", part, re.MULTILINE):
            m[f"{suite}: {success.strip()}"] = "PASSED"
    return m


def cypress(log, v5):
    m = {}
    for part in log.split("../..")[:-1]:
        for test in re.findall(r"\"fullTitle\"\:\s\"(.*)\",\n", part.split('  "passes": [')[-1].rsplit("  }", 1)[0], re.MULTILINE):
            m[test] = "PASSED"
        for test in re.findall(r"\"fullTitle\"\:\s\"(.*)\",\n", part.split('  "failures": [')[-1].rsplit("  ],", 1)[0], re.MULTILINE):
            m[test] = "FAILED"
    return m


def carbon(log, v5):
    return react_pdf(log, v5)


def lighthouse_mocha(log, v5):
    m = {}
    for run in re.split(r"running\s\d+\stest\sfiles", log)[1:]:
        run = re.split(r"\d+\spassing", run)[0].strip()
        suite = []
        for line in run.split("\n"):
            found = False
            for pattern in [
                (r"✔\s(.*)\s\(\d+m+s\)", "PASSED"),
                (r"✔\s(.*)", "PASSED"),
                (r"\d+\)\s(.*)\s\(\d+m+s\)", "FAILED"),
                (r"\d+\)\s(.*)", "FAILED"),
            ]:
                if re.match(pattern[0], line.strip()):
                    test = re.match(pattern[0], line.strip()).group(1)
                    m[" - ".join([x[0] for x in suite] + [test])] = pattern[1]
                    found = True
                    break
            if not found and len(line) - len(line.lstrip()) > 0:
                indent = len(line) - len(line.lstrip())
                if len(suite) == 0:
                    suite = [(line.strip(), indent)]
                else:
                    while len(suite) > 0 and suite[-1][-1] >= indent:
                        suite.pop()
                    suite.append([line.strip(), indent])
    return m


def lighthouse_json(log, v5):
    m = {}
    for part in log.split("./node_modules/.bin/mocha --reporter json")[1:]:
        for test in re.findall(r"\"fullTitle\"\:\s\"(.*)\",\n", part.split('"passes": [')[-1].rsplit("]", 1)[0], re.MULTILINE):
            m[test] = "PASSED"
        for test in re.findall(r"\"fullTitle\"\:\s\"(.*)\",\n", part.split('"failures": [')[-1].rsplit("],", 1)[0], re.MULTILINE):
            m[test] = "FAILED"
    return m


def quarto_cli(log, v5):
    tmp_file_patterns = [r"/tmp/(\w+)\.qmd", r"/tmp/(\w+)/"]
    tmp_key_map = {}
    cnt = 0
    m = {}
    for line in log.split("\n"):
        if re.search(r"ERRORS", line) or re.search(r"failures:", line):
            break
        if re.search(r"\[(smoke|unit)\]", line):
            for pattern in tmp_file_patterns:
                match = re.search(pattern, line)
                if match:
                    if match.group(0) not in tmp_key_map.keys():
                        tmp_key_map[match.group(0)] = cnt
                        cnt += 1
                    line = re.sub(pattern, f"/tmp/{tmp_key_map[match.group(0)]}", line)
            test_name = line.split("...")[0].strip()
            for pattern in [(r"32mok", "PASSED"), (r"31mFAILED", "FAILED")]:
                reject_condition = (
                    re.match(r"test result:", line)
                    or (re.search("passed", line) and re.search("failed", line) and re.search("steps", line))
                    or (re.search("34mINFO", line))
                )
                if re.search(pattern[0], line) and not reject_condition:
                    m[test_name] = pattern[1]
                    break
            if test_name not in m and not reject_condition:
                m[test_name] = "FAILED"
    return m


def plotly_js(log, v5):
    suite_pattern = re.compile(r"(\s+)-\s+(.*?)\s+:")
    test_pattern = re.compile(r"(\s+)\*\s+(.*?)\s+:\s*(.*)")
    suite_stack = ([], 0)
    m = {}
    for line in log.split("\n"):
        suite_match = suite_pattern.match(line)
        if suite_match:
            spaces, suite_name = suite_match.groups()
            spaces = len(spaces)
            while suite_stack[0] and spaces <= suite_stack[1]:
                suite_stack[0].pop()
            suite_stack = (suite_stack[0] + [suite_name], spaces)
        else:
            test_match = test_pattern.match(line)
            if test_match:
                spaces, test_name, status = test_match.groups()
                spaces = len(spaces)
                while suite_stack[0] and spaces <= suite_stack[1]:
                    suite_stack[0].pop()
                full_test_name = ".".join(suite_stack[0] + [test_name])
                if "ok" not in status.lower() or "failed" in status.lower():
                    m[full_test_name] = "FAILED"
                else:
                    m[full_test_name] = "PASSED"
    return m


def dispatch(spec, v5, log):
    """The dispatching parsers, given a test_spec dict."""
    name = spec["parser"]
    iid, version = spec.get("instance_id", ""), spec.get("version", "")
    if name == "immutable_js":
        pr = iid.split("-")[-1]
        if pr in ["2006"]:
            return jest(log, v5)
        elif pr in ["2005"]:
            return jest_json(log, v5)
        raise ValueError(f"Unknown instance id: {iid}")
    if name == "jekyll":
        pr = iid.split("-")[1]
        if pr in ["9141", "8047", "8167"]:
            return minitest(log, v5)
        elif pr in ["8761", "8771"]:
            return cucumber(log, v5)
        raise ValueError(f"Unknown instance id: {iid}")
    if name == "next":
        return next_v2(log, v5) if version in ["1.27"] else next_v1(log, v5)
    if name == "lighthouse":
        if version in ["9.5", "10.0", "10.2"]:
            return lighthouse_mocha(log, v5)
        elif float(version) >= 3:
            return carbon(log, v5)
        return lighthouse_json(log, v5)
    raise KeyError(name)


def immutable_js(log, v5):
    return dispatch({"parser": "immutable_js"}, v5, log)


def jekyll(log, v5):
    return dispatch({"parser": "jekyll"}, v5, log)


def next(log, v5):
    return dispatch({"parser": "next"}, v5, log)


def lighthouse(log, v5):
    return dispatch({"parser": "lighthouse"}, v5, log)


def main():
    cases = json.load(sys.stdin)
    out = []
    for case in cases:
        fn = globals()[case["parser"]]
        try:
            if case.get("target"):
                spec = dict(case["target"], parser=case["parser"])
                out.append({"map": dispatch(spec, case["rules"] == "v5", case["log"])})
            else:
                out.append({"map": fn(case["log"], case["rules"] == "v5")})
        except (IndexError, AttributeError, KeyError, TypeError, ValueError, ET.ParseError) as e:
            out.append({"error": type(e).__name__})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
