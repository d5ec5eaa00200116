#!/usr/bin/env bash
# bench/acp.sh — `agentls acp` beside Gemini CLI's `--acp` on the same fake model, as an
# editor drives them: bench/acp/inittime (Go) times spawn to the first line of the
# initialize answer; bench/acp/driver.mjs (the TypeScript ACP SDK of test/acp as the
# client) times session/new and one scripted turn (a prompt, a read_file call, the
# answer: two requests to a fresh fakegemini per round), every round checked. Gemini CLI is @google/gemini-cli 0.61.0, installed as
# bench/agent.sh installs it (bench/agent/.cache). Then session/list's first page over
# 1,000 stored sessions (BenchmarkSessionList, target 50 ms) and spawn to initialize
# through the Go SDK (target 20 ms).
#
# Usage: bench/acp.sh                 (ROUNDS=15 by default, the two agents alternating)
#        SKIP_GEMINI=1 bench/acp.sh   (agentls only; no npm install)
#        BENCH_QUICK=1 bench/acp.sh   (one round of agentls, one benchmark iteration)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
rounds=${ROUNDS:-15}
benchtime=30x
if [ -n "${BENCH_QUICK:-}" ]; then
	rounds=1 benchtime=1x SKIP_GEMINI=1
fi
gemini_version=0.61.0
cache=$repo/bench/agent/.cache/gemini-cli
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd test/acp && { [ -f node_modules/.package-lock.json ] || npm ci --no-audit --no-fund --loglevel=error; })
go build -o "$tmp/agentls" ./cmd/agentls
go build -o "$tmp/fakegemini" ./internal/fakegemini/cmd/fakegemini
go build -o "$tmp/inittime" ./bench/acp/inittime

agents=(agentls)
if [ -z "${SKIP_GEMINI:-}" ]; then
	installed=$(node -p "require('$cache/node_modules/@google/gemini-cli/package.json').version" 2>/dev/null || true)
	if [ "$installed" != "$gemini_version" ]; then
		echo "installing @google/gemini-cli@$gemini_version into $cache"
		mkdir -p "$cache"
		npm install --prefix "$cache" --no-audit --no-fund --loglevel=error "@google/gemini-cli@$gemini_version"
	fi
	gemini=$cache/node_modules/@google/gemini-cli/bundle/gemini.js
	echo "gemini-cli $(node "$gemini" --version) at $gemini"
	agents+=(gemini)
fi

# run AGENT ROUNDS: ROUNDS checked rounds of AGENT on a fresh home and workspace, and
# ROUNDS spawns to initialize.
run() {
	local agent=$1 n=$2 home ws
	home=$(mktemp -d "$tmp/home-XXXX")
	ws=$(mktemp -d "$tmp/ws-XXXX")
	case $agent in
	agentls)
		node bench/acp/driver.mjs agentls "$tmp/fakegemini" "$home" "$ws" "$n" -- "$tmp/agentls" acp
		echo "agentls $(HOME=$home GEMINI_API_KEY=fake "$tmp/inittime" -n "$n" -dir "$ws" -- "$tmp/agentls" acp)"
		;;
	gemini)
		mkdir -p "$home/.gemini"
		cat >"$home/.gemini/settings.json" <<-'JSON'
			{
			  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
			  "privacy": {"usageStatisticsEnabled": false},
			  "telemetry": {"enabled": false},
			  "security": {"auth": {"selectedType": "gemini-api-key"}},
			  "ide": {"enabled": false}
			}
		JSON
		printf '{"%s": "TRUST_FOLDER"}\n' "$ws" >"$home/.gemini/trustedFolders.json"
		GEMINI_TELEMETRY_ENABLED=false node bench/acp/driver.mjs gemini "$tmp/fakegemini" "$home" "$ws" "$n" -- \
			node "$gemini" --acp -m gemini-2.5-flash
		echo "gemini $(HOME=$home GEMINI_API_KEY=fake GEMINI_TELEMETRY_ENABLED=false "$tmp/inittime" -n "$n" -dir "$ws" -- \
			node "$gemini" --acp -m gemini-2.5-flash)"
		;;
	esac
}

# Alternating, one round at a time, so that a busy moment of the machine is shared.
for _ in $(seq "$rounds"); do
	for a in "${agents[@]}"; do
		run "$a" 1 | tee -a "$tmp/results"
	done
done

# median AGENT FIELD
median() {
	awk -v a="$1" -v f="$2" '$1 == a { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == f) v[++n] = kv[2] + 0 } }
		END { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			if (n == 0) { print "-"; exit } printf "%.1f (%.1f–%.1f)", (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2, v[1], v[n] }' "$tmp/results"
}
echo "== medians (min–max) over $rounds rounds, ms"
printf '%-8s %-26s %-26s %-26s\n' agent "spawn to initialize" "session/new" "one turn"
for a in "${agents[@]}"; do
	printf '%-8s %-26s %-26s %-26s\n' "$a" "$(median "$a" init_ms)" "$(median "$a" new_ms)" "$(median "$a" turn_ms)"
done

echo "== session/list over 1,000 stored sessions; spawn to initialize through the Go SDK"
go test -run='^$' -bench='^Benchmark(SessionList|StartToInitialize)$' -benchtime=$benchtime ./rpc/acp | grep -E '^Benchmark|^ok'
