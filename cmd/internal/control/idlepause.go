package control

import (
	"context"
	"os"
	"time"

	"fmctl/backends"
)

// idlePause is the pause between two reads of the multiplexer in a verb
// that waits on a task (wait, read --follow, list --watch). Each read
// starts a multiplexer client, so the pause doubles from backends.MinPoll
// up to FM_WATCH_POLL while nothing changes, and an idle waiter costs
// almost nothing. Meanwhile the watched state files (the agent's own
// reports, the record) are stat'ed every FM_STATE_POLL, which starts no
// process: when one changes the pause ends at once and starts short
// again, so what the agent reports is answered within that poll, not
// within FM_WATCH_POLL.
type idlePause struct {
	backoff   backends.Backoff
	statePoll time.Duration
	paths     []string
	stamps    []fileStamp
}

// fileStamp is what a write shows on a file: every state write is a
// rename over it, with its own modification time. A directory's time (the
// events directory's) moves with each file a hook adds to it.
type fileStamp struct {
	mod  time.Time
	size int64
	ok   bool
}

func stampOf(path string) fileStamp {
	fi, err := os.Lstat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{mod: fi.ModTime(), size: fi.Size(), ok: true}
}

func (c *Controller) idlePause(paths ...string) *idlePause {
	p := &idlePause{backoff: backends.Backoff{Max: c.tun.Control.Watch}, statePoll: c.tun.Control.StatePoll, paths: paths}
	p.restamp()
	return p
}

func (p *idlePause) restamp() {
	p.stamps = p.stamps[:0]
	for _, path := range p.paths {
		p.stamps = append(p.stamps, stampOf(path))
	}
}

// Reset makes the next pause short again, after the waiter saw a change
// of its own.
func (p *idlePause) Reset() { p.backoff = backends.Backoff{Max: p.backoff.Max} }

// Sleep pauses for the next interval, at most limit, or until a watched
// file changes (which resets the backoff) or ctx ends (its error).
func (p *idlePause) Sleep(ctx context.Context, limit time.Duration) error {
	end := time.Now().Add(min(p.backoff.Next(), limit))
	for {
		left := time.Until(end)
		if left <= 0 {
			return nil
		}
		if err := backends.Sleep(ctx, min(left, max(p.statePoll, backends.MinPoll))); err != nil {
			return err
		}
		if p.changed() {
			p.Reset()
			return nil
		}
	}
}

func (p *idlePause) changed() bool {
	for i, path := range p.paths {
		if s := stampOf(path); s.ok != p.stamps[i].ok || s.size != p.stamps[i].size || !s.mod.Equal(p.stamps[i].mod) {
			p.restamp()
			return true
		}
	}
	return false
}
