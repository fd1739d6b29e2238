// Package press is the one path a key takes to an agent's endpoint:
// fm-send --key, the interrupt's rounds, exit's keys, a composer's clear
// and the Enter of a submit or a launch line all press through it. It owns
// the gate before each key (checked server-side, in the key's own
// multiplexer call, where the backend implements backends.GatedKeySender;
// else read just before the key), what a key whose call timed out means
// (it may have run: unconfirmed, never "not sent"), the gap between the
// keys of a sequence, and the gap an Escape leaves before the next input.
package press

import (
	"context"
	"time"

	"fmctl/backends"
	"fmctl/harness"
	"fmctl/state"
)

// Keys presses keys into one endpoint, each its own input event.
type Keys struct {
	Backend  backends.Backend
	Endpoint backends.Endpoint
	// Gate judges the agent state read right before each key; its refusal
	// is returned unchanged, with that key and every later one unsent.
	// Nil presses without a read: the keys go to a shell (a launch line),
	// or the caller judged the agent for the whole sequence itself.
	Gate func(backends.Observation) error
	// Gap separates the keys of a sequence, and is what an Escape needs
	// before the next input (Settle).
	Gap time.Duration
	// Hold is the task's input lock, held by the caller, where Settle
	// records the gap for the next input; nil sleeps it through.
	Hold *state.Lock
	// Words word a key that did not go as the caller's verb does; nil
	// returns the multiplexer's error itself.
	Words *Words
}

// Opts ask for reads beside the keys, in the keys' own multiplexer calls
// where the backend can.
type Opts struct {
	ScreenBefore bool // the screen right before the first key
	ReadAfter    bool // the agent state right after the last key
}

// Pressed is what a sequence did.
type Pressed struct {
	Sent    int   // keys that went, in order
	Refused error // the gate's refusal of key Sent, if it refused
	Err     error // the multiplexer's error for key Sent, if its call failed
	// Judged is the agent state the gate judged last: after a refusal,
	// the state the earlier keys left the agent in.
	Judged *backends.Observation
	Before *backends.Screen      // with ScreenBefore, when it could be read
	After  *backends.Observation // with ReadAfter, when read in the last key's call
}

// Unknown says the key that did not go may have gone after all: its call
// timed out, and the multiplexer can carry out a key before the timeout
// ends its client (backends.MayHaveRun).
func (p Pressed) Unknown() bool {
	_, ok := backends.MayHaveRun(p.Err)
	return ok
}

// Press presses one key.
func (k Keys) Press(ctx context.Context, key harness.Key, o Opts) (Pressed, error) {
	return k.Sequence(ctx, []harness.Key{key}, o)
}

// Sequence presses keys in order, Gap apart, each past the gate, and stops
// at the first that does not go. The error is the gate's refusal
// unchanged, or the failed key's, worded by Words.
func (k Keys) Sequence(ctx context.Context, keys []harness.Key, o Opts) (Pressed, error) {
	var p Pressed
	for i, key := range keys {
		if i > 0 && k.Gap > 0 {
			if err := backends.Sleep(ctx, k.Gap); err != nil {
				p.Err = err
				return p, k.Words.of(key, err)
			}
		}
		one := o
		one.ScreenBefore = o.ScreenBefore && i == 0
		one.ReadAfter = o.ReadAfter && i == len(keys)-1
		if err := k.one(ctx, key, one, &p); p.Refused != nil {
			return p, p.Refused
		} else if err != nil {
			p.Err = err
			return p, k.Words.of(key, err)
		}
		p.Sent++
	}
	return p, nil
}

// one presses key past the gate, with the reads o asks for.
func (k Keys) one(ctx context.Context, key harness.Key, o Opts, p *Pressed) error {
	gate := k.Gate
	if gate != nil {
		gate = func(obs backends.Observation) error {
			p.Judged = &obs
			return k.Gate(obs)
		}
	}
	if gk, ok := k.Backend.(backends.GatedKeySender); ok && gate != nil {
		res, err := gk.SendKeyGated(ctx, k.Endpoint, key, backends.GatedKey{Gate: gate, ReadAfter: o.ReadAfter, ScreenBefore: o.ScreenBefore})
		if res.Before != nil {
			p.Before = res.Before
		}
		p.Refused, p.After = res.Refused, res.After
		return err
	}
	if gate != nil {
		if err := gate(k.Backend.AgentState(ctx, k.Endpoint)); err != nil {
			p.Refused = err
			return nil
		}
	}
	if o.ScreenBefore {
		if s, err := k.Backend.Capture(ctx, k.Endpoint); err == nil {
			p.Before = &s
		}
	}
	if kr, ok := k.Backend.(backends.KeyReader); ok && o.ReadAfter {
		obs, err := kr.SendKeyThenState(ctx, k.Endpoint, key)
		if err == nil {
			p.After = &obs
		}
		return err
	}
	return k.Backend.SendKey(ctx, k.Endpoint, key)
}

// GateOnce is the gate for a sequence judged as a whole where the backend
// cannot check it in each key's own call: there the agent is read and
// judged now, once, and the keys go with no gate (a read before every key
// would add a multiplexer call per key); where the backend gates each key
// itself, gate is returned as it is.
func GateOnce(ctx context.Context, b backends.Backend, ep backends.Endpoint, gate func(backends.Observation) error) (func(backends.Observation) error, error) {
	if _, ok := b.(backends.GatedKeySender); ok || gate == nil {
		return gate, nil
	}
	if err := gate(b.AgentState(ctx, ep)); err != nil {
		return nil, err
	}
	return nil, nil
}

// Settle leaves the gap an Escape needs when last, the last key pressed,
// is one: an Escape followed at once by typed text reads as Alt+<char>
// (gemini took an exit typed right after it as "quit", and the Escape never
// cancelled). Only the next input needs the gap, and every input to the
// task takes its input lock first, so it is recorded there (Hold) rather
// than slept through, unless there is no lock to record it in.
func (k Keys) Settle(last harness.Key) {
	if last != harness.KeyEscape {
		return
	}
	if k.Hold == nil || k.Hold.HoldInputUntil(time.Now().Add(k.Gap)) != nil {
		time.Sleep(k.Gap)
	}
}
