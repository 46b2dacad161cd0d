#!/usr/bin/env bash
# purlin-gpu-test, one process per linked collective, several at once: the
# tests of one collective spend most of their time on the host (inputs,
# the reference, the checks) and in first-use compiles, so on a machine with
# many cores the collectives run side by side on the one GPU (correctness
# only: the tests time nothing).
#
#   tools/gpu-test-all.sh PURLIN_GPU_TEST [ARGS...]    e.g. --quick
#
# Env: PURLIN_GPU_JOBS (processes at once, default nproc / 4, at least 1),
# PURLIN_GPU_TEST_TIMEOUT (seconds a collective, default 600),
# PURLIN_GPU_TEST_SLOW (NAME:SECONDS,...: collectives that take longer, with
# their own limits; they start first; default all_reduce_2d:480, whose
# first-use compile of 22 pairs alone takes ~205 s on 16 cores), LOG (a
# folder for the per-collective logs, default a temporary one).
# Prints a line a collective as each ends, then "N passed, M failed" over
# all of them; exits 1 when a check failed, a process crashed or timed out,
# or nothing was checked.
set -uo pipefail
T=${1:?usage: gpu-test-all.sh PURLIN_GPU_TEST [ARGS...]}
shift
LOG=${LOG:-$(mktemp -d /tmp/purlin-gpu-test-XXXXXX)}
mkdir -p "$LOG"
jobs=${PURLIN_GPU_JOBS:-$(( $(nproc) / 4 ))}
[ "$jobs" -ge 1 ] || jobs=1
lim=${PURLIN_GPU_TEST_TIMEOUT:-600}
slow=${PURLIN_GPU_TEST_SLOW-all_reduce_2d:480}
names=$("$T" --list) || { echo "FAIL: $T --list: $names"; exit 1; }
# The slow ones first (those linked in), then the rest in --list's order.
first=
for item in ${slow//,/ }; do
  printf '%s\n' $names | grep -qx "${item%%:*}" && first="$first ${item%%:*}"
done
rest=$(printf '%s\n' $names | grep -vxF -f <(printf '%s\n' $first) || true)
names="$first $rest"
one() { # name, args...: the collective's process; its summary line
  local name=$1
  shift
  local s=$SECONDS l=$lim item
  for item in ${slow//,/ }; do
    [ "${item%%:*}" = "$name" ] && l=${item#*:}
  done
  timeout -k 5 "$l" "$T" "$@" --only "$name" >"$LOG/gpu-test-$name.log" 2>&1
  local rc=$?
  echo "$rc" >"$LOG/gpu-test-$name.rc"
  local last
  last=$(tail -1 "$LOG/gpu-test-$name.log")
  echo "$name (rc=$rc, $(( SECONDS - s )) s): $last"
  grep -E "^FAIL|FAIL:" "$LOG/gpu-test-$name.log" | head -5 | sed 's/^/    /'
}
export -f one
export T LOG lim slow
printf '%s\n' $names | xargs -P "$jobs" -I{} bash -c 'one "$@"' _ {} "$@"
passed=0 failed=0 bad=0
for name in $names; do
  f="$LOG/gpu-test-$name.log"
  line=$(grep -E "^[0-9]+ passed, [0-9]+ failed$" "$f" | tail -1)
  if [ -z "$line" ]; then
    grep -q "^SKIPPED" "$f" && continue
    bad=$((bad + 1))
    echo "FAIL: $name ended without its summary line (crash or time limit: $f)"
    continue
  fi
  rc=$(cat "$LOG/gpu-test-$name.rc" 2>/dev/null || echo 1)
  if [ "$rc" != 0 ] && [ "${line#*, }" = "0 failed" ]; then
    bad=$((bad + 1))
    echo "FAIL: $name exited with status $rc after its summary line ($f)"
  fi
  passed=$((passed + ${line%% passed*}))
  f2=${line#*, }
  failed=$((failed + ${f2%% failed}))
done
if [ $((passed + failed + bad)) -eq 0 ] && grep -qh "^SKIPPED" "$LOG"/gpu-test-*.log 2>/dev/null; then
  grep -h "^SKIPPED" "$LOG"/gpu-test-*.log | head -1
  exit 0
fi
echo "$(echo $names | wc -w) collectives, $jobs at once (logs: $LOG)"
if [ "$bad" -gt 0 ]; then
  echo "$passed passed, $failed failed; $bad collectives FAILED without a result (above)"
else
  echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ] && [ "$bad" -eq 0 ] && [ "$passed" -gt 0 ]
