package config

import (
	"errors"
	"path/filepath"
	"strings"

	"fmctl/harness"
	"fmctl/phrase"
	"fmctl/state"
)

// Pin is the `<harness> [model] [effort]` line of config/secondmate-harness.
type Pin struct {
	Harness string
	Model   string
	Effort  string
	Path    string
}

// SecondmatePin reads config/secondmate-harness: its first non-empty line
// that is not a comment. A missing file, or the word "default", is no pin.
func (h Home) SecondmatePin() (Pin, bool, error) {
	path := filepath.Join(h.Config, "secondmate-harness")
	line, err := firstLine(path)
	if err != nil || line == "" {
		return Pin{}, false, err
	}
	f := strings.Fields(line)
	if f[0] == "default" {
		return Pin{}, false, nil
	}
	p := Pin{Harness: f[0], Path: path}
	if len(f) > 1 {
		p.Model = f[1]
	}
	if len(f) > 2 {
		p.Effort = f[2]
	}
	return p, true, nil
}

// Verified checks the pin against the capability table: an unverified
// harness is refused (a pin never launches a guess); a model or effort
// token that could not go on a launch line is dropped with a warning, as
// the harness's own default is still a deliberate choice.
func (p Pin) Verified(warn func(format string, args ...any)) (Pin, error) {
	if _, ok := harness.Lookup(p.Harness); !ok {
		return p, state.Errorf(ErrBadPin, "the configured secondmate harness '%s' (%s) is not verified; fix the pin or pass --harness (verified: %s)", phrase.Printable(p.Harness), p.Path, strings.Join(harness.Names(), ", "))
	}
	if p.Effort != "" && !harness.ValidEffort(p.Effort) {
		warn("config/secondmate-harness effort token '%s' is not one of %s; ignoring", phrase.Printable(p.Effort), strings.Join(harness.Efforts, ", "))
		p.Effort = ""
	}
	if p.Model != "" && p.Model != "default" && !harness.ValidModel(p.Model) {
		warn("config/secondmate-harness model token '%s' has characters outside [A-Za-z0-9._:/@+-]; ignoring", phrase.Printable(p.Model))
		p.Model = ""
	}
	return p, nil
}

// ErrBadPin marks a configured harness pin fmctl will not launch.
var ErrBadPin = errors.New("unusable harness pin")
