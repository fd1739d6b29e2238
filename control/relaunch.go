package control

import (
	"context"

	"fmctl/refusal"
	"fmctl/resolve"
)

func (c *Controller) runRelaunch(ctx context.Context, t *resolve.Target, opts RelaunchOptions) error {
	return refusal.Failed("relaunch is not built yet")
}
