package deliver

import (
	"context"

	"fmctl/backends"
)

// withTurn adds the multiplexer's own turn signal (herdr's agent_status),
// where the backend has one, to a post-Enter classifier. It is read once
// now, with the text typed and before Enter: only when that reading is
// idle does a turn seen running after Enter (working, or blocked at a
// prompt the turn raised) prove the submit landed, whatever the composer
// still draws. It never proves the opposite: herdr can keep agent_status
// idle through a landed turn, so otherwise the screen decides, as before.
func withTurn(ctx context.Context, b backends.Backend, ep backends.Endpoint, classify func(backends.Screen) ComposerState) func(backends.Screen) ComposerState {
	tr, ok := b.(backends.TurnReader)
	if !ok || tr.Turn(ctx, ep) != backends.TurnIdle {
		return classify
	}
	return func(s backends.Screen) ComposerState {
		if tr.Turn(ctx, ep).Busy() {
			return Cleared
		}
		return classify(s)
	}
}
