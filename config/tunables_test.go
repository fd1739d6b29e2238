package config

import (
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestTableBindsEveryFieldOnce keeps the table and Tunables one fact: a
// field no row reads into, or one two rows do, fails.
func TestTableBindsEveryFieldOnce(t *testing.T) {
	var tun Tunables
	bound := map[any]string{}
	for _, row := range table {
		p := row.field(&tun)
		if other, ok := bound[p]; ok {
			t.Errorf("%s and %s read into the same field", other, row.Name)
		}
		bound[p] = row.Name
	}
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		for i := range v.NumField() {
			f, name := v.Field(i), path+v.Type().Field(i).Name
			if f.Kind() == reflect.Struct && f.Type() != reflect.TypeFor[time.Duration]() {
				walk(f, name+".")
				continue
			}
			if _, ok := bound[f.Addr().Interface()]; !ok {
				t.Errorf("Tunables.%s is read by no row of the table", name)
			}
		}
	}
	walk(reflect.ValueOf(&tun).Elem(), "")
}

var variableName = regexp.MustCompile(`^FM_[A-Z0-9_]+$`)

// TestTableRows checks each row is documentable: a name, a unit its field
// can hold, a default its unit reads back as written, and a doc line.
func TestTableRows(t *testing.T) {
	seen := map[string]bool{}
	for _, row := range table {
		if !variableName.MatchString(row.Name) || seen[row.Name] {
			t.Errorf("%q: not an FM_ name, or listed twice", row.Name)
		}
		seen[row.Name] = true
		if row.Doc == "" {
			t.Errorf("%s has no doc", row.Name)
		}
		var tun Tunables
		want := map[Unit]reflect.Type{UnitDuration: reflect.TypeFor[*time.Duration](), UnitCount: reflect.TypeFor[*int](), UnitBool: reflect.TypeFor[*bool]()}[row.Unit]
		got := reflect.TypeOf(row.field(&tun))
		if want != nil && got != want && !(row.Unit == UnitDuration && got == reflect.TypeFor[*string]()) {
			t.Errorf("%s: unit %s read into a %s", row.Name, row.Unit, got)
		}
		if want == nil && got != reflect.TypeFor[*string]() {
			t.Errorf("%s: unit %s read into a %s", row.Name, row.Unit, got)
		}
		if got := row.Value(DefaultTunables()); got != row.Default {
			t.Errorf("%s: default %q reads back as %q", row.Name, row.Default, got)
		}
	}
}

// read is ReadTunables of one variable: its Tunables and whether the
// value was refused.
func read(name, value string) (Tunables, bool) {
	tun, bad := ReadTunables(envOf(map[string]string{name: value}))
	return tun, len(bad) > 0
}

// A value its unit refuses keeps the default for the run and is reported,
// so the binary refuses to run (never silently on the default); blank is
// unset.
func TestReadTunablesDurations(t *testing.T) {
	const bad = -1
	cases := map[string]time.Duration{
		"0.5":    500 * time.Millisecond,
		"5":      5 * time.Second,
		"0":      0,
		" 2 ":    2 * time.Second,
		"250ms":  250 * time.Millisecond,
		"1m30s":  90 * time.Second,
		"":       90 * time.Second,
		"   ":    90 * time.Second,
		"-1":     bad,
		"-0.5":   bad,
		"-250ms": bad,
		"junk":   bad,
		"5 s":    bad,
		"1e-3":   time.Millisecond,
		"NaN":    bad,
		"90000":  bad,
	}
	for in, want := range cases {
		tun, refused := read("FM_CONTROL_LAUNCH_WAIT", in)
		if want == bad && (!refused || tun.Control.LaunchWait != 90*time.Second) || want != bad && (refused || tun.Control.LaunchWait != want) {
			t.Errorf("FM_CONTROL_LAUNCH_WAIT=%q: %v (refused %v), want %v", in, tun.Control.LaunchWait, refused, want)
		}
	}
	// a bound that exists to prevent an unbounded call keeps its default at
	// 0, as documented: 0 is no bad value
	for in, want := range map[string]time.Duration{"0": 5 * time.Second, "2": 2 * time.Second, "750ms": 750 * time.Millisecond} {
		if tun, refused := read("FM_MUX_TIMEOUT", in); refused || tun.Mux.Timeout != want {
			t.Errorf("FM_MUX_TIMEOUT=%q: %v (refused %v), want %v", in, tun.Mux.Timeout, refused, want)
		}
	}
	// FM_CONTROL_WAIT is kept as given, for wait, and a bad one refused too
	if tun, refused := read("FM_CONTROL_WAIT", "soon"); !refused || tun.Control.Wait != "soon" {
		t.Errorf("FM_CONTROL_WAIT=soon: %q, refused %v", tun.Control.Wait, refused)
	}
}

func TestReadTunablesCountsAndWords(t *testing.T) {
	for in, want := range map[string]int{"3": 3, "0": 0, " 4 ": 4, "": 3} {
		if tun, refused := read("FM_SEND_RETRIES", in); refused || tun.Send.Retries != want {
			t.Errorf("FM_SEND_RETRIES=%q: %d (refused %v), want %d", in, tun.Send.Retries, refused, want)
		}
	}
	for _, in := range []string{"-1", "x", "1.5"} {
		if tun, refused := read("FM_SEND_RETRIES", in); !refused || tun.Send.Retries != 3 {
			t.Errorf("FM_SEND_RETRIES=%q: %d, refused %v: want refused, the default kept", in, tun.Send.Retries, refused)
		}
	}
	tun, bad := ReadTunables(envOf(map[string]string{"FM_TMUX_BIN": "/opt/tmux", "FM_COMPLETION": "1"}))
	if tun.Mux.TmuxBin != "/opt/tmux" || !tun.Completion || tun.Mux.HerdrBin != "" || len(bad) > 0 {
		t.Errorf("tunables = %+v, bad %v", tun.Mux, bad)
	}
	if d := DefaultTunables(); d.Completion || d.Control.Wait != "30s" {
		t.Errorf("defaults = %+v", d)
	}
}

// Every bad value is reported, in table order, each naming its variable,
// the value as given (made printable) and what its unit takes.
func TestReadTunablesReportsEveryBadValue(t *testing.T) {
	_, bad := ReadTunables(envOf(map[string]string{"FM_SEND_RETRIES": "many", "FM_MUX_TIMEOUT": "soon\x1b[2J", "FM_SPAWN_WAIT": "1"}))
	var got []string
	for _, b := range bad {
		got = append(got, b.Error())
	}
	want := []string{
		"FM_MUX_TIMEOUT 'soon\\x1b[2J' is not a wait: give seconds (2.5) or a Go duration (500ms, 1m30s) up to 24h",
		"FM_SEND_RETRIES 'many' is not a count: give a whole number, 0 or more",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("bad values:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if bad[1].Default != "3" {
		t.Errorf("FM_SEND_RETRIES default %q", bad[1].Default)
	}
}

func TestValueIsTheEffectiveValue(t *testing.T) {
	tun, _ := ReadTunables(envOf(map[string]string{"FM_SEND_LOCK_WAIT": "250ms", "FM_CONTROL_EXIT_RETRIES": "7"}))
	got := map[string]string{}
	for _, row := range table {
		got[row.Name] = row.Value(tun)
	}
	if got["FM_SEND_LOCK_WAIT"] != "0.25s" || got["FM_CONTROL_EXIT_RETRIES"] != "7" || got["FM_SPAWN_WAIT"] != "30s" {
		t.Errorf("values = %v", got)
	}
	if _, err := strconv.ParseFloat(got["FM_MUX_TIMEOUT"][:len(got["FM_MUX_TIMEOUT"])-1], 64); err != nil {
		t.Errorf("FM_MUX_TIMEOUT printed as %q, not seconds", got["FM_MUX_TIMEOUT"])
	}
}
