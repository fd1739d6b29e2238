package spawn

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"fmctl/cmd/internal/fault"
	"fmctl/config"
	"fmctl/harness"
	"fmctl/phrase"
	"fmctl/state"
)

// profile is the harness, model and effort a fresh agent is launched with.
type profile struct {
	Harness       harness.Harness
	Model, Effort string
}

// freshProfile picks a fresh task's harness. An explicit --harness always
// wins. Without one, a secondmate takes config/secondmate-harness (with its
// model and effort unless --model/--effort are given), exactly as its
// relaunch does, then config/crew-harness; a ship or scout takes
// config/crew-harness. Nothing is ever guessed: with no choice anywhere the
// spawn is refused, naming both ways to make one.
func (s Spawner) freshProfile(home config.Home, req Request, kind harness.Kind) (profile, error) {
	p := profile{Model: req.Model, Effort: req.Effort}
	name := req.Harness
	if name == "" && kind == harness.KindSecondmate {
		pin, ok, err := home.SecondmatePin()
		if err != nil {
			return p, fault.Failed("the secondmate harness pin cannot be read: %v", err).Coded(fault.EBadPin).
				Hint("make it a file holding one line '<harness> [model] [effort]', or pass --harness")
		}
		if ok {
			if pin, err = pin.Verified(s.Print.Warn); err != nil {
				return p, err
			}
			name = pin.Harness
			if p.Model == "" {
				p.Model = pin.Model
			}
			if p.Effort == "" {
				p.Effort = pin.Effort
			}
		}
	}
	crewPath, fromCrew := filepath.Join(home.Config, "crew-harness"), false
	if name == "" {
		crew, err := home.CrewHarness()
		if err != nil {
			return p, fault.Failed("the crew harness cannot be read: %v", err).Coded(fault.EBadPin).
				Hint("make it a file holding one harness name, or pass --harness")
		}
		name, fromCrew = crew, true
	}
	if name == "" {
		return p, fault.Usage("fm-spawn needs a harness").
			Hint("pass --harness H, one of %s", strings.Join(harness.Names(), ", ")).
			Hint("or name a default in %s", crewPath)
	}
	h, ok := harness.Lookup(name)
	if !ok && fromCrew {
		return p, fault.Failed("the crew harness '%s' (%s) is not verified", phrase.Printable(name), crewPath).Coded(fault.EBadPin).
			Hint("fix it, or pass --harness H, one of %s", strings.Join(harness.Names(), ", "))
	}
	if !ok {
		return p, fault.Failed("unknown harness '%s'", phrase.Printable(name)).Coded(fault.EUnverifiedHarness).
			Hint("fmctl launches verified harnesses only: %s", strings.Join(harness.Names(), ", "))
	}
	if !h.SupportsKind(kind) {
		return p, fault.Failed("'%s' is not verified to run a %s task", h.Name, kind).Coded(fault.EUnverifiedHarness)
	}
	if p.Model != "" && p.Model != "default" && h.Launch.ModelFlag == "" {
		return p, fault.Failed("harness %s takes no model flag; drop --model", h.Name).Coded(fault.EUnverifiedHarness)
	}
	p.Harness = h
	return p, nil
}

// secondmateMarker names the file that makes a directory a secondmate's
// own home; fm-control relaunch's checkpoint requires it to hold the id.
const secondmateMarker = ".fm-secondmate-home"

// provisionHome makes a secondmate's worktree its own home: state/, data/
// and config/, the marker naming it, and its charter (data/charter.md, a
// copy of its brief). An existing charter is never rewritten, and a home
// marked as another secondmate's is refused. undo takes back what it made,
// for a launch that fails in a worktree fm-spawn adopted.
func provisionHome(dir, id, brief string) (undo func(), err error) {
	var made []string // in the order made; undo removes them in reverse
	undo = func() {
		for i := len(made) - 1; i >= 0; i-- {
			_ = os.Remove(made[i]) // a directory only while empty
		}
	}
	missing := func(names ...string) {
		for _, p := range names {
			if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
				made = append(made, p)
			}
		}
	}
	if err := refuseOthersHome(dir, id); err != nil {
		return undo, err
	}
	missing(filepath.Join(dir, "state"), filepath.Join(dir, "data"), filepath.Join(dir, "config"))
	if err := config.MakeHomeDirs(dir); err != nil {
		return undo, fault.Failed("provision secondmate %s's home: %v", id, err)
	}
	charter := filepath.Join(dir, "data", "charter.md")
	if _, err := os.Lstat(charter); err != nil {
		text, err := os.ReadFile(brief)
		if err != nil {
			return undo, fault.Failed("secondmate %s's charter cannot be read from %s: %v", id, brief, err)
		}
		if err := state.WriteAtomic(charter, text); err != nil {
			return undo, fault.Failed("write secondmate %s's charter: %v", id, err)
		}
		made = append(made, charter)
	}
	marker := filepath.Join(dir, secondmateMarker)
	missing(marker)
	if err := state.WriteAtomic(marker, []byte(id+"\n")); err != nil {
		return undo, fault.Failed("mark secondmate %s's home: %v", id, err)
	}
	return undo, nil
}

// refuseOthersHome refuses a directory marked as another secondmate's home.
func refuseOthersHome(dir, id string) error {
	marker := filepath.Join(dir, secondmateMarker)
	if data, err := state.ReadSmallFile(marker, 4096); err == nil {
		if m := strings.TrimSpace(string(data)); m != id {
			return fault.Failed("'%s' is the home of secondmate '%s' (%s); give %s a home of its own", dir, phrase.Printable(m), marker, id)
		}
	}
	return nil
}

// refuseFirstmateHome refuses a secondmate home that is the home fm-spawn
// runs in, or lies in its state/, data/ or config/: the secondmate runs with
// FM_HOME set to it, so it would take the firstmate's records (its own
// among them) for its own, and its marker would claim the firstmate's home.
func refuseFirstmateHome(home config.Home, dir string, req Request) error {
	id := req.ID
	at := resolved(dir)
	for _, d := range []string{home.Root, home.State, home.Data, home.Config} {
		rel, err := filepath.Rel(resolved(d), at)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || (d == home.Root && rel != ".") {
			continue
		}
		return fault.Failed("secondmate %s's home '%s' is the firstmate home '%s' or inside its records", id, dir, home.Root).Coded(fault.EBadWorktree).
			Hint("give it a worktree of its own: %s", req.command("--project", "<repo>"))
	}
	return nil
}

// resolved is path with its symlinks resolved; of a path that does not
// exist yet (a worktree fm-spawn is about to add), its nearest existing
// parent is.
func resolved(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	if parent := filepath.Dir(path); parent != path {
		return filepath.Join(resolved(parent), filepath.Base(path))
	}
	return path
}
