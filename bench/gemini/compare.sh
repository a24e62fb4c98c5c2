#!/usr/bin/env bash
# compare.sh times toolgate's engine (end to end, real paths resolved) and
# Gemini CLI's policy engine on the same five calls with equivalent rules,
# each as CPU time per decision on one core, and prints the ratio per
# call (Gemini's time over toolgate's: above 1, toolgate is faster).
#
#	bench/gemini/compare.sh [ITER]
#
# ITER is the number of timed decisions per call on each side (default
# 10000), after as many to warm up. The two sides run in turn, ROUNDS
# times (default 3): each call's time on each side is its lowest over the
# rounds, the run least slowed by whatever else the machine did, and the
# ratios of the rounds, each side against the other in the same round,
# are printed as a range beside it. Each of Gemini CLI's runs is stopped
# after GEMINI_CMP_TIMEOUT seconds (default 300). Gemini CLI's engine runs in a process
# of its own for each call. GEMINI_CLI_DIR names the installed
# @google/gemini-cli package (see policy-bench.mjs).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
iter=${1:-10000}
cli=${GEMINI_CLI_DIR:-/opt/toolgate-agents/node_modules/@google/gemini-cli}

rounds=${ROUNDS:-3}
if ! command -v node >/dev/null || [ ! -f "$cli/bundle/gemini.js" ]; then
	echo "compare.sh: Gemini CLI is not installed at $cli (or node is missing); toolgate alone:" >&2
	(cd "$here/.." && GEMINI_CMP=1 GEMINI_CMP_ITER="$iter" GOMAXPROCS=1 go test -count=1 -run '^TestCPU$' -v ./gemini) | grep '^case '
	exit 1
fi
# One line per case and round: "round case ns decision", for each side.
tg="" gm="" header=""
for r in $(seq 1 "$rounds"); do
	out=$(cd "$here/.." && GEMINI_CMP=1 GEMINI_CMP_ITER="$iter" GOMAXPROCS=1 go test -count=1 -run '^TestCPU$' -v ./gemini) ||
		{ echo "$out" >&2; echo "compare.sh: timing toolgate failed" >&2; exit 1; }
	tg+=$(echo "$out" | awk -v r="$r" '$1 == "case" { print r, $2, $3, $4 }')$'\n'
	# Gemini CLI's shell parser prints Aborted() when it breaks down; the
	# script then fails on the changed decision, and one line says so.
	for c in read write git-status chained wrapped; do
		o=$(timeout "${GEMINI_CMP_TIMEOUT:-300}" node --expose-gc "$here/policy-bench.mjs" "$iter" "$c" 2> >(grep -v '^Aborted()$' >&2)) ||
			{ echo "compare.sh: policy-bench.mjs failed on $c (exit $?; 124 is the ${GEMINI_CMP_TIMEOUT:-300} s limit: its shell parser slows down and grows past some tens of thousands of parses, so keep ITER near the default)" >&2; exit 1; }
		header+=$(echo "$o" | grep '^#' || true)$'\n'
		gm+=$(echo "$o" | awk -v r="$r" '$1 == "case" { print r, $2, $3, $4 }')$'\n'
	done
done
echo "$header" | grep '^#' | sort -u || true
echo "# toolgate: engine.Check end to end, $iter decisions per case, GOMAXPROCS=1; $rounds rounds in turn, lowest time of each side"
printf '%-11s %12s %12s %9s %15s  %s\n' case toolgate_ns gemini_ns gemini/tg 'rounds' 'decisions (toolgate, gemini)'
# Each case must be timed on both sides in every round, and allowed on
# both, or the ratio compares different work.
{ echo "$tg" | awk 'NF { print "t", $0 }'; echo "$gm" | awk 'NF { print "g", $0 }'; } |
	awk -v rounds="$rounds" '
	{ side = $1; r = $2; c = $3; ns = $4; d = $5
	  t[side, c, r] = ns; n[side, c]++
	  if (!((side, c) in lo) || ns < lo[side, c]) lo[side, c] = ns
	  if (d != "allow") bad[c] = 1; dec[side, c] = d }
	END { split("read write git-status chained wrapped", order)
	      for (i = 1; i <= 5; i++) {
	        c = order[i]
	        if (n["t", c] != rounds || n["g", c] != rounds) { missing = missing " " c; continue }
	        rmin = ""; rmax = ""
	        for (r = 1; r <= rounds; r++) {
	          x = t["g", c, r] / t["t", c, r]
	          if (rmin == "" || x < rmin) rmin = x
	          if (rmax == "" || x > rmax) rmax = x
	        }
	        printf "%-11s %12d %12d %8.2fx %6.2f–%.2fx  %s, %s\n", c, lo["t", c], lo["g", c], lo["g", c] / lo["t", c], rmin, rmax, dec["t", c], dec["g", c]
	        if (c in bad) badl = badl " " c
	      }
	      if (missing != "") print "compare.sh: not timed on both sides in every round:" missing > "/dev/stderr"
	      if (badl != "") print "compare.sh: not allowed on both sides:" badl > "/dev/stderr"
	      exit (missing != "" || badl != "") }'
