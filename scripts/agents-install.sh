#!/usr/bin/env bash
# Installs the real agent CLIs pinned in tests/agents/npm (exact versions in
# package.json, the whole tree in package-lock.json; npm ci is not used because
# opencode-ai declares optional platform packages npm ci cannot reconcile)
# into a cache directory (git ignores it) and reuses the cache while the lock
# is unchanged. An npm failure fails the run with npm's own error.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:?usage: agents-install.sh CACHE_DIR}
lock="$root/tests/agents/npm/package-lock.json"
want=$(sha256sum "$lock" | cut -d' ' -f1)
if [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$want" ]; then
	echo "agents: reusing $dir"
	exit 0
fi
mkdir -p "$dir"
rm -f "$dir/.installed"
cp "$root/tests/agents/npm/package.json" "$lock" "$dir/"
echo "agents: npm install (pinned by the lock) into $dir"
(cd "$dir" && npm install --no-audit --no-fund --loglevel=error)
for bin in claude codex opencode pi gemini; do
	[ -x "$dir/node_modules/.bin/$bin" ] || { echo "agents: $bin is missing from $dir/node_modules/.bin after npm install" >&2; exit 1; }
done
echo "$want" >"$dir/.installed"
