#!/usr/bin/env bash
# Regenerates the JUnit reports and --hostemu-outcomes lines runner_pytest_test.go reads, with the hostemu pytest
# plugin from python/ and the system's pytest (and pytest-xdist for junit-xdist.xml).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../../.." && pwd)
cd "$here/suite"
run() { PYTHONPATH="$root/python" HOSTEMU_MUTANT=http://127.0.0.1:9/r/unused /usr/bin/python3 -m pytest -p hostemu.pytest_plugin -p no:cacheprovider -q -o junit_logging=all "$@" >/dev/null || true; }
rm -f "$here"/outcomes*.jsonl
run --junitxml="$here/junit.xml" --hostemu-outcomes="$here/outcomes.jsonl" .
run --junitxml="$here/junit-xdist.xml" --hostemu-outcomes="$here/outcomes-xdist.jsonl" -n 2 .
run --junitxml="$here/junit-legacy.xml" -o junit_family=legacy .
# without the plugin: no node ids
PYTHONPATH="$root/python" /usr/bin/python3 -m pytest -p no:cacheprovider -q --junitxml="$here/junit-noplugin.xml" . >/dev/null || true
# the timestamps and host names vary; the rest is what pytest writes
sed -i -E 's/ timestamp="[^"]*"//; s/ hostname="[^"]*"//; s/ time="[^"]*"//g' "$here"/junit*.xml
