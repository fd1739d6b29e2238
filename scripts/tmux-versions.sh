#!/usr/bin/env bash
# Runs the backends' tests and the real-tmux suite against tmux releases
# built from source, so the formats, flags and command sequences fmctl's
# tmux client calls rely on are run on each release, not only on the
# machine's own tmux.
#
#   scripts/tmux-versions.sh <tmux git checkout> [tag ...]
#
# Each tag is built once into .cache/tmux/<tag> (needs a C compiler,
# autoconf, automake, bison, pkg-config, libevent and ncurses headers) and
# put first on PATH, so the private test servers and every tmux client the
# tests run are that release. Default tags: 3.2a 3.5a 3.6b 3.7c.
set -euo pipefail
src=${1:?usage: scripts/tmux-versions.sh <tmux git checkout> [tag ...]}
shift
tags=("$@")
[ ${#tags[@]} -gt 0 ] || tags=(3.2a 3.5a 3.6b 3.7c)
root=$(cd "$(dirname "$0")/.." && pwd)
cache="$root/.cache/tmux"
mkdir -p "$cache"
status=0
for tag in "${tags[@]}"; do
	dir="$cache/$tag"
	if [ ! -x "$dir/tmux" ]; then
		echo "== building tmux $tag"
		rm -rf "$dir" && mkdir -p "$dir"
		git -C "$src" archive "$tag" | tar -x -C "$dir"
		(cd "$dir" && sh autogen.sh >/dev/null 2>&1 && ./configure >/dev/null && make -j2 >/dev/null)
	fi
	echo "== $("$dir/tmux" -V)"
	if ! (cd "$root" && PATH="$dir:$PATH" go test -count=1 -tags fmfault ./backends/... ./tests/realtmux/); then
		status=1
	fi
done
exit $status
