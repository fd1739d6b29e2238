#!/usr/bin/env bash
# Runs the tmux wire's tests (backends/...) and the real-tmux suite against
# tmux releases built from source, so the releases the wire speaks to
# (backends/tmux/wire/version.go: 3.7c by default, 3.2 to 3.7 with
# FM_TMUX_WIRE=1) rest on runs, not only on reading the protocol. The wire's
# tests opt in themselves; the rest of the real-tmux suite takes the
# release's default (the wire on 3.7c, a tmux client per call elsewhere).
# A tag added to the default list in version.go must pass here first.
#
#   scripts/wire-versions.sh <tmux git checkout> [tag ...]
#
# Each tag is built once into .cache/tmux/<tag> (needs a C compiler,
# autoconf, automake, bison, pkg-config, libevent and ncurses headers) and
# put first on PATH, so the private test servers and the tmux clients the
# tests compare against are that release. Default tags: 3.2a 3.5a 3.6b 3.7c.
set -euo pipefail
src=${1:?usage: scripts/wire-versions.sh <tmux git checkout> [tag ...]}
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
	if ! (cd "$root" && PATH="$dir:$PATH" go test -count=1 ./backends/... ./tests/realtmux/); then
		status=1
	fi
done
exit $status
