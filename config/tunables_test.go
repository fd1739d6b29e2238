package config

import (
	"reflect"
	"regexp"
	"strconv"
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

func TestReadTunablesDurations(t *testing.T) {
	cases := map[string]time.Duration{
		"0.5":    500 * time.Millisecond,
		"5":      5 * time.Second,
		"0":      0,
		" 2 ":    2 * time.Second,
		"250ms":  250 * time.Millisecond,
		"1m30s":  90 * time.Second,
		"":       90 * time.Second,
		"   ":    90 * time.Second,
		"-1":     90 * time.Second,
		"-0.5":   90 * time.Second,
		"-250ms": 90 * time.Second,
		"junk":   90 * time.Second,
		"5 s":    90 * time.Second,
		"1e-3":   time.Millisecond,
		"NaN":    90 * time.Second,
		"90000":  90 * time.Second,
	}
	for in, want := range cases {
		if got := ReadTunables(envOf(map[string]string{"FM_CONTROL_LAUNCH_WAIT": in})).Control.LaunchWait; got != want {
			t.Errorf("FM_CONTROL_LAUNCH_WAIT=%q: %v, want %v", in, got, want)
		}
	}
	// a bound that exists to prevent an unbounded call keeps its default at 0
	for in, want := range map[string]time.Duration{"0": 5 * time.Second, "2": 2 * time.Second, "750ms": 750 * time.Millisecond, "soon": 5 * time.Second} {
		if got := ReadTunables(envOf(map[string]string{"FM_MUX_TIMEOUT": in})).Mux.Timeout; got != want {
			t.Errorf("FM_MUX_TIMEOUT=%q: %v, want %v", in, got, want)
		}
	}
}

func TestReadTunablesCountsAndWords(t *testing.T) {
	for in, want := range map[string]int{"3": 3, "0": 0, " 4 ": 4, "": 3, "-1": 3, "x": 3, "1.5": 3} {
		if got := ReadTunables(envOf(map[string]string{"FM_SEND_RETRIES": in})).Send.Retries; got != want {
			t.Errorf("FM_SEND_RETRIES=%q: %d, want %d", in, got, want)
		}
	}
	tun := ReadTunables(envOf(map[string]string{"FM_TMUX_BIN": "/opt/tmux", "FM_COMPLETION": "1"}))
	if tun.Mux.TmuxBin != "/opt/tmux" || !tun.Completion || tun.Mux.HerdrBin != "" {
		t.Errorf("tunables = %+v", tun.Mux)
	}
	if d := DefaultTunables(); d.Completion || d.Control.Wait != "30s" {
		t.Errorf("defaults = %+v", d)
	}
}

func TestValueIsTheEffectiveValue(t *testing.T) {
	tun := ReadTunables(envOf(map[string]string{"FM_SEND_LOCK_WAIT": "250ms", "FM_CONTROL_EXIT_RETRIES": "7"}))
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
