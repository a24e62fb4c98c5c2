#!/usr/bin/env bash
# compare.sh times toolgate's engine (end to end, real paths resolved) and
# Gemini CLI's policy engine on the same five calls with equivalent rules,
# each as CPU time per decision on one core, and prints the ratio per
# call (Gemini's time over toolgate's: above 1, toolgate is faster).
#
#	bench/gemini/compare.sh [ITER]
#
# ITER is the number of timed decisions per call on each side (default
# 10000), after as many to warm up; each of Gemini CLI's runs is stopped
# after GEMINI_CMP_TIMEOUT seconds (default 300). Gemini CLI's engine runs in a process
# of its own for each call. GEMINI_CLI_DIR names the installed
# @google/gemini-cli package (see policy-bench.mjs).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
iter=${1:-10000}
cli=${GEMINI_CLI_DIR:-/opt/toolgate-agents/node_modules/@google/gemini-cli}

out=$(cd "$here/.." && GEMINI_CMP=1 GEMINI_CMP_ITER="$iter" GOMAXPROCS=1 go test -count=1 -run '^TestCPU$' -v ./gemini) ||
	{ echo "$out" >&2; echo "compare.sh: timing toolgate failed" >&2; exit 1; }
tg=$(echo "$out" | grep '^case ')
if ! command -v node >/dev/null || [ ! -f "$cli/bundle/gemini.js" ]; then
	echo "compare.sh: Gemini CLI is not installed at $cli (or node is missing); toolgate alone:" >&2
	echo "$tg"
	exit 1
fi
# Gemini CLI's shell parser prints Aborted() when it breaks down; the
# script then fails on the changed decision, and one line says so.
gm=$(for c in read write git-status chained wrapped; do
	timeout "${GEMINI_CMP_TIMEOUT:-300}" node --expose-gc "$here/policy-bench.mjs" "$iter" "$c" 2> >(grep -v '^Aborted()$' >&2) ||
		{ echo "compare.sh: policy-bench.mjs failed on $c (exit $?; 124 is the ${GEMINI_CMP_TIMEOUT:-300} s limit: its shell parser slows down and grows past some tens of thousands of parses, so keep ITER near the default)" >&2; exit 1; }
done)
echo "$gm" | grep '^#' | sort -u || true
echo "# toolgate: engine.Check end to end, $iter decisions per case, GOMAXPROCS=1"
printf '%-11s %14s %14s %9s  %s\n' case toolgate_ns gemini_ns gemini/tg 'decisions (toolgate, gemini)'
# Each case must be timed on both sides, and allowed on both, or the
# ratio compares different work.
join -j 2 <(echo "$tg" | sort -k2,2) <(echo "$gm" | grep '^case ' | sort -k2,2) |
	awk '{ line[$1] = sprintf("%-11s %14d %14d %8.2fx  %s, %s", $1, $3, $6, $6 / $3, $4, $7)
	       if ($4 != "allow" || $7 != "allow") bad = bad " " $1 }
	END { n = split("read write git-status chained wrapped", order)
	      for (i = 1; i <= n; i++) if (order[i] in line) print line[order[i]]; else missing = missing " " order[i]
	      if (missing != "") print "compare.sh: not timed on both sides:" missing > "/dev/stderr"
	      if (bad != "") print "compare.sh: not allowed on both sides:" bad > "/dev/stderr"
	      exit (missing != "" || bad != "") }'
