// Package signalctx gives a verb a context that SIGINT and SIGTERM cancel,
// so that a verb that waits stops promptly and says where it stopped.
//
// Installing the handler starts the runtime's signal thread, about 0.3 ms
// of a process that lives for a few (and as much again on two CPUs while a
// multiplexer client runs beside it). A context from New installs it only
// when the verb first waits (Arm, which every pause calls) or a call of its
// outlasts a moment: an interrupt of an idle agent, one tmux call, never
// pays for it. A signal before then ends the process as it would have a
// moment earlier, before the verb began.
package signalctx

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

type key struct{}

// lazy is one context's handler, installed at most once.
type lazy struct {
	install sync.Once
	stop    sync.Once
	cancel  context.CancelFunc
	stopped chan struct{}
}

// New returns parent, cancelled by SIGINT or SIGTERM once armed (Arm), and
// the function that cancels it and removes the handler.
func New(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	l := &lazy{cancel: cancel, stopped: make(chan struct{})}
	return context.WithValue(ctx, key{}, l), func() {
		l.stop.Do(func() { close(l.stopped) })
		cancel()
	}
}

// Armed is New with the handler installed at once, for a verb that blocks
// on what no pause covers (a remote call, a stream's writes).
func Armed(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, stop := New(parent)
	Arm(ctx)
	return ctx, stop
}

// Arm installs the handler of the context New made that ctx derives from,
// if it is not installed yet; under any other context it does nothing.
func Arm(ctx context.Context) {
	if l, ok := ctx.Value(key{}).(*lazy); ok {
		l.install.Do(l.watch)
	}
}

func (l *lazy) watch() {
	select {
	case <-l.stopped:
		return
	default:
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		// Until stop, a second signal is caught as the first was: the
		// verb is still saying where it stopped.
		defer signal.Stop(sigs)
		select {
		case <-sigs:
			l.cancel()
			<-l.stopped
		case <-l.stopped:
		}
	}()
}
