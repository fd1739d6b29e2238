package control

import (
	"strings"

	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/task"
	"fmctl/harness"
	"fmctl/phrase"
)

// profile is a relaunch's from -> to runtime.
type profile struct {
	FromHarness, FromModel, FromEffort string
	To                                 harness.Harness
	ToModel, ToEffort                  string
}

// resolveProfile picks the replacement's harness, model and effort. Explicit
// flags win. A secondmate re-reads its config/secondmate-harness pin; a ship
// or scout keeps its recorded harness and never reads configuration. A
// harness change resets model and effort unless they are named too.
func (c *Controller) resolveProfile(t *task.Target, o RelaunchOptions) (profile, error) {
	rec := t.Task.Record
	p := profile{
		FromHarness: t.RecordedHarness,
		FromModel:   orDefault(rec.Model()),
		FromEffort:  orDefault(rec.Effort()),
	}
	target := o.Harness
	var pinModel, pinEffort string
	fromPin := false
	if target == "" && t.Kind == harness.KindSecondmate {
		pin, ok, err := t.Home.SecondmatePin()
		if err != nil {
			return p, fault.Failed("task %s is a secondmate, and its harness pin cannot be read: %v", t.ID, err).Coded(fault.EBadPin)
		}
		if ok {
			if pin, err = pin.Verified(c.print.Warn); err != nil {
				return p, err
			}
			target, pinModel, pinEffort, fromPin = pin.Harness, pin.Model, pin.Effort, true
		}
	}
	if target == "" {
		// The prior family is the target only when the recorded value is the
		// adapter's own name: a raw command's basename (grok-2) cannot be
		// reconstructed, and substituting the canonical adapter would change
		// what runs.
		if t.RecordedHarness != t.Harness.Name {
			return p, fault.Failed("task %s records harness '%s', whose launch command cannot be rebuilt from its recorded name", t.ID, phrase.Printable(t.RecordedHarness)).Coded(fault.EUnverifiedHarness).
				Hint("a relaunch without --harness would run the canonical '%s' instead of the command that runs now", t.Harness.Name).
				Hint("pass --harness to choose the replacement deliberately")
		}
		target = t.Harness.Name
	}
	h, ok := harness.Lookup(target)
	if !ok {
		return p, fault.Failed("'%s' is not a verified harness; relaunch only starts verified adapters (%s)", phrase.Printable(target), strings.Join(harness.Names(), ", ")).Coded(fault.EUnverifiedHarness)
	}
	if !h.SupportsKind(t.Kind) {
		return p, fault.Failed("'%s' is not verified to run a %s task; nothing was touched", h.Name, t.Kind).Coded(fault.EUnverifiedHarness).
			Hint("relaunching %s onto it would stop the running agent with no replacement able to start: pick another --harness", t.ID)
	}
	p.To = h
	sameHarness := h.Name == t.Harness.Name
	p.ToModel = pick(o.Model, fromPin && o.Harness == "", pinModel, sameHarness, p.FromModel)
	p.ToEffort = pick(o.Effort, fromPin && o.Harness == "", pinEffort, sameHarness, p.FromEffort)
	if p.ToModel != "default" && !harness.ValidModel(p.ToModel) {
		// Only a hand-edited record gets here (flags and pins are checked
		// when read); the launch line would refuse it after the stop.
		return p, fault.Failed("task %s records model '%s', which no launch line may carry (characters outside [A-Za-z0-9._:/@+-])", t.ID, phrase.Printable(p.ToModel)).Coded(fault.EBadRecord).
			Hint("pass --model to choose the replacement's model")
	}
	if p.ToEffort != "default" && !harness.ValidEffort(p.ToEffort) {
		return p, fault.Failed("task %s records effort '%s', which is not one of %s", t.ID, phrase.Printable(p.ToEffort), strings.Join(harness.Efforts, ", ")).Coded(fault.EBadRecord).
			Hint("pass --effort to choose the replacement's effort")
	}
	if p.ToModel != "default" && h.Launch.ModelFlag == "" {
		return p, fault.Failed("harness %s takes no model flag, so model '%s' cannot be carried to it", h.Name, p.ToModel).Coded(fault.EUnverifiedHarness).
			Hint("pass --model default")
	}
	return p, nil
}

// pick applies the model/effort precedence: explicit, then the pin (when the
// harness came from it), then the prior value when the harness is unchanged.
func pick(explicit string, usePin bool, pinned string, same bool, prior string) string {
	switch {
	case explicit != "":
		return explicit
	case usePin:
		return orDefault(pinned)
	case same:
		return prior
	}
	return "default"
}

func orDefault(v string) string {
	if v == "" {
		return "default"
	}
	return v
}
