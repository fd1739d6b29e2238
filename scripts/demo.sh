#!/usr/bin/env bash
# A two-minute walkthrough on a private tmux server: spawn a fake "claude"
# agent for task demo1, send it a message, interrupt it, relaunch it onto a
# fake "codex", stop it, and tear the task down once its work has landed. It
# never touches your own tmux server.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$PWD/bin}
work=$(mktemp -d /tmp/fmctl-demo.XXXXXX)
sock=fmctl-demo-$$
cleanup() { tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# An empty home: the first fm-spawn makes its state/, data/ and config/.
mkdir -p "$work/agents" "$work/home"
go build -o "$work/agents/claude" ./tests/fakeagent
cp "$work/agents/claude" "$work/agents/codex"
# The project the task works on: fm-spawn --project adds the task's worktree
# (branch fm/demo1) beside it, at $work/project-worktrees/demo1.
git init -q -b main "$work/project"
git -C "$work/project" -c user.name=demo -c user.email=demo@example.invalid commit -q --allow-empty -m start
printf 'Say hello, then wait.\n' > "$work/brief.md"

export FM_HOME=$work/home FM_TMUX_SOCKET=$sock FM_TMUX_SESSION=demo TMUX=
export FM_CONTROL_EXIT_WAIT=5 FM_SPAWN_WAIT=10 FM_CONTROL_LAUNCH_WAIT=10
# tmux gives a new window the PATH of the unattached client that created it,
# and the panes' shell runs no profile that could reset it (default-command
# below), so the fake agents on this script's PATH are what the panes find
# (docs/backends/tmux.md, "The pane's PATH").
export PATH=$work/agents:$PATH
tmux -L "$sock" -f /dev/null new-session -d -s demo -n home "bash --norc --noprofile"
tmux -L "$sock" set-environment -t demo FAKEAGENT_EVENTS "$work/events.log"
# The fake agents keep their transcripts under HOME, as the real CLIs do
# (fm-send confirms a message from them): a private one, so the demo writes
# nothing into your own ~/.claude or ~/.codex.
mkdir -p "$work/agenthome"
tmux -L "$sock" set-environment -t demo HOME "$work/agenthome"
tmux -L "$sock" set-option -t demo default-command "bash --norc --noprofile"

step() { printf '\n$'; printf ' %q' "$@"; printf '\n'; "$@"; }
step "$BIN/fm-spawn" demo1 --harness claude --project "$work/project" --brief "$work/brief.md"
step "$BIN/fm-send" demo1 "hello from the demo"
step "$BIN/fm-control" interrupt demo1
step "$BIN/fm-control" status demo1
step "$BIN/fm-control" relaunch demo1 --harness codex --note "demo: carry on where claude stopped"
step "$BIN/fm-control" exit demo1
printf '\nWhat the fake agents received (their event log):\n'
cat "$work/events.log"
printf '\nThe task record:\n'
cat "$FM_HOME/state/demo1.meta"

# The task's work, a commit on fm/demo1: fm-teardown refuses until it has
# landed (this project has no remote, so: merged into main), then finishes
# the task and archives its records.
wt=$work/project-worktrees/demo1
git -C "$wt" -c user.name=demo -c user.email=demo@example.invalid commit -q --allow-empty -m "the demo's work"
step "$BIN/fm-teardown" demo1 || true
step git -C "$work/project" merge -q --ff-only fm/demo1
step "$BIN/fm-teardown" demo1
step "$BIN/fm-control" list
printf '\nThe archive:\n'
ls "$FM_HOME"/state/archive/demo1-*/
