#!/bin/sh
# skinner eval from the command line: a shipped example, stdin, and the exit
# status 2 with one line naming the field for bad input.
set -u
: "${SKINNER:=./skinner}" "${SK_TEST_DATA:=tests}"
top="$SK_TEST_DATA/.."
fail=0
pass=0
check() { if eval "$2"; then pass=$((pass + 1)); else echo "FAIL: $1"; fail=$((fail + 1)); fi; }

out=$("$SKINNER" eval "$top/proto/examples/case-babylon-page.json")
check "the shipped example evaluates" '[ $? -eq 0 ] && echo "$out" | grep -q "\"order\":\[\"body\",\"armLeft\",\"armRight\"\]"'
out2=$("$SKINNER" eval < "$top/proto/examples/case-babylon-page.json")
check "stdin gives the same answer" '[ "$out" = "$out2" ]'
err=$(echo '{"skeleton": {"bones": [{"name": "a", "parent": "b"}]}, "ops": []}' | "$SKINNER" eval 2>&1 >/dev/null)
st=$?
check "unknown parent exits 2" '[ $st -eq 2 ]'
check "the message names the field" 'echo "$err" | grep -q "/skeleton/bones/0/parent"'
check "the message is one line" '[ "$(echo "$err" | wc -l)" -eq 1 ]'
echo '{"skeleton": ' | "$SKINNER" eval >/dev/null 2>&1
check "truncated JSON exits 2" '[ $? -eq 2 ]'
"$SKINNER" eval /nonexistent/case.json >/dev/null 2>&1
check "a missing file exits 2" '[ $? -eq 2 ]'
"$SKINNER" --version | grep -q '^skinner '
check "--version prints the version" '[ $? -eq 0 ]'
out=$(cd / && "$SKINNER" eval "$SK_TEST_DATA/data/case-fox-walk.json")
check "a glTF case resolves its file next to the case" '[ $? -eq 0 ] && [ "$(echo "$out" | python3 -c "import json,sys; r=json.load(sys.stdin); print(len(r[\"order\"]), len(r[\"results\"]), len(r[\"results\"][0][\"final\"]))")" = "24 5 400" ]'
help=$("$SKINNER" eval --help)
check "eval --help prints the usage and exits 0" '[ $? -eq 0 ] && echo "$help" | grep -q "^usage: skinner eval"'
err=$("$SKINNER" eval --bogus 2>&1 >/dev/null)
st=$?
check "an unknown eval option exits 2 and says so" '[ $st -eq 2 ] && echo "$err" | grep -q "unknown option --bogus"'
err=$(echo '{"skeleton": {"bones": [{"name": "a"}]}, "ops": [{"op": "pose", "output": []}]}' | "$SKINNER" eval 2>&1 >/dev/null)
st=$?
check '"output": [] exits 2 naming /ops/0/output and every output' '[ $st -eq 2 ] && echo "$err" | grep -q "/ops/0/output\": \"output\" is empty; ask for at least one of \"final\", \"absolute\", \"local\", \"world\", \"positions\""'
err=$(echo '{"skeleton": {"bones": [{"name": "a"}]}, "ops": [{"op": "pose", "output": ["global"]}]}' | "$SKINNER" eval 2>&1 >/dev/null)
st=$?
check 'an unknown output exits 2 naming every output' '[ $st -eq 2 ] && echo "$err" | grep -q "/ops/0/output/0\": expected \"final\", \"absolute\", \"local\", \"world\" or \"positions\""'
echo "skinner_eval_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
