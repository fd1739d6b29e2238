package press

import (
	"fmt"

	"fmctl/backends"
	"fmctl/cmd/internal/fault"
	"fmctl/harness"
)

// Words are how a verb names a key that did not go, one pair of sentences
// per verb that presses keys for the user. What each means is the path's:
// a call that timed out may have run (backends.MayHaveRun), so that key is
// unconfirmed (exit 3) and never "not sent", which would invite a resend;
// any other failure is a delivery that failed (EDeliveryFailed).
type Words struct {
	unknown func(key harness.Key, te *backends.TimeoutError) *fault.Error
	notSent func(key harness.Key, cause string) *fault.Error
}

// SendWords are fm-send --key's, for task id at endpoint on backend.
func SendWords(id, endpoint, backend string) *Words {
	return &Words{
		unknown: func(key harness.Key, te *backends.TimeoutError) *fault.Error {
			return unknown(fmt.Sprintf("key '%s' to %s", key, endpoint), te, id, "sending it again")
		},
		notSent: func(key harness.Key, cause string) *fault.Error {
			return fault.Failed("key '%s' not sent to %s (%s send failed: %v)", key, endpoint, backend, cause)
		},
	}
}

// InterruptWords are the interrupt's (and exit's, which interrupts first),
// for task id on backend.
func InterruptWords(id, backend string) *Words {
	return &Words{
		unknown: func(key harness.Key, te *backends.TimeoutError) *fault.Error {
			return unknown(fmt.Sprintf("interrupt key %s to task %s", key, id), te, id, "interrupting again")
		},
		notSent: func(key harness.Key, cause string) *fault.Error {
			return fault.Failed("interrupt key %s was not delivered to task %s on %s: %v", key, id, backend, cause)
		},
	}
}

func unknown(what string, te *backends.TimeoutError, id, again string) *fault.Error {
	return fault.Unconfirmed("%s: %v, so whether it reached the agent is unknown", what, te).
		Hint("look at the pane (fm-control read %s) before %s", id, again)
}

// of words err, the multiplexer's error for key (Pressed.Err keeps it);
// nil Words leave it as it is, for a caller that words it in its own
// sentence.
func (w *Words) of(key harness.Key, err error) error {
	if w == nil {
		return err
	}
	if te, ok := backends.MayHaveRun(err); ok {
		return w.unknown(key, te)
	}
	return w.notSent(key, backends.StderrOf(err)).Coded(fault.EDeliveryFailed)
}
