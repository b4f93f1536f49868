#!/usr/bin/env bash
# The whole test suite: installs what is missing (Debian 12, as root),
# configures BUILD_DIR (default build/) with -Dwerror=true plus any extra meson
# options given, builds, and runs `meson test` (unit, golden, oracle, fuzz
# replay). Exits with meson test's status; the per-test results are in
# BUILD_DIR/meson-logs/testlog.json. Extra `meson test` arguments can be
# given in $NS_MESON_TEST_ARGS (e.g. "--timeout-multiplier 4").
#   scripts/test.sh                      # build/
#   scripts/test.sh build-asan -Db_sanitize=address,undefined -Db_lundef=false
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
ns_install_missing
dir=${1:-build}
shift || true
if [ -f "$dir/build.ninja" ]; then
	meson setup --reconfigure "$dir" -Dwerror=true "$@"
else
	meson setup "$dir" -Dwerror=true "$@"
fi
meson compile -C "$dir"
status=0
# shellcheck disable=SC2086
meson test -C "$dir" --print-errorlogs ${NS_MESON_TEST_ARGS:-} || status=$?
# A skipped test says why on its stdout (e.g. a corpus file this checkout
# lacks): show each reason, since meson only prints SKIP.
python3 - "$dir/meson-logs/testlog.json" <<'PY' || true
import json, sys
for line in open(sys.argv[1]):
    t = json.loads(line)
    if t.get("result") == "SKIP":
        why = [l for l in (t.get("stdout") or "").splitlines() if "skip" in l.lower()]
        print("skipped %s: %s" % (t["name"], why[0] if why else "(no reason printed)"), file=sys.stderr)
PY
exit $status
