"""Python transcription of the official SWE-bench log parsers, for the
differential test in differential_test.go.

The Go parsers reimplement Python's str and re semantics (split, strip,
\\s, \\d, leftmost-first matching); this file runs the same rules in Python
itself so both can be compared on generated logs. It reads a JSON list of
{"parser", "rules", "log"} on stdin and writes a JSON list of results
({"map": {...}} or {"error": "..."}) on stdout.

Rules follow swebench/harness/log_parsers at v4.1.0 and v5 as described in
shared/reference/swebench-harness.md (v5 details from the 5.0.2 sources:
_is_skip_summary, pytest_v2 full names, the seaborn guard).
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
            m[name.strip()] = {"✓": "PASSED", "✕": "FAILED", "○": "SKIPPED"}[sym]
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
    pending = []
    for line in log.split("\n"):
        t = re.match(r"^.*-Dtest=(\S+).*$", line.strip())
        if t:
            pending.append(t.groups()[0])
        r = re.match(r"^.*BUILD (SUCCESS|FAILURE)$", line.strip())
        if r and pending:
            name = pending.pop(0)
            m[name] = "PASSED" if r.groups()[0] == "SUCCESS" else "FAILED"
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
        match = re.match(r"^(\S+\s+>\s+\S+)$", s)
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


def main():
    cases = json.load(sys.stdin)
    out = []
    for case in cases:
        fn = globals()[case["parser"]]
        try:
            out.append({"map": fn(case["log"], case["rules"] == "v5")})
        except (IndexError, AttributeError, ET.ParseError) as e:
            out.append({"error": type(e).__name__})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
