package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fmctl/state"
	"fmctl/tests/agents/stubmodel"
	"fmctl/tests/sshlab"
)

// remoteHost is the host name the remote group's task lives on.
const remoteHost = "remote"

// remoteGroup drives a real agent on another host: an sshd the test starts
// on loopback (package sshlab) whose sessions see the lab's HOME, tmux
// server and FM_HOME, while the fm binaries run here with an FM_HOME of
// their own that only names the host. Every verb goes over ssh as
// <host>/<id>, and every claim is judged by the agent's own record on the
// host, which, on this one machine, the lab reads as it always does.
func remoteGroup(t *testing.T, p profile) {
	if missing := sshlab.Missing(); len(missing) > 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must run the remote group, and %s is missing (.ci/run installs openssh-server)", strings.Join(missing, ", "))
		}
		t.Skipf("the remote group needs %s (CI installs them, so it runs there)", strings.Join(missing, ", "))
	}
	l := newLab(t, p, "remote")
	here := l.onHost(remoteHost)
	if l.scenario("remote-spawn", func(s *scen) {
		spawned(l, s)
		// The task is the host's: its record in the host's FM_HOME, none
		// in the one here.
		there, local := state.Store{Dir: filepath.Join(l.fmHome, "state")}, state.Store{Dir: filepath.Join(here, "state")}
		switch {
		case !exists(there.MetaPath(l.id)):
			s.mark(False, "exit 0, but the host's FM_HOME holds no task %s", l.id)
		case exists(local.MetaPath(l.id)):
			s.mark(False, "exit 0, but task %s was recorded here, not only on the host", l.id)
		}
	}) == Broken {
		return
	}
	l.settleLaunch()
	l.scenario("remote-send-idle", func(s *scen) {
		s.send("sent over ssh " + randHex(3))
	})
	l.settle(30 * time.Second)
	l.scenario("remote-wait-idle", func(s *scen) {
		r := l.fm("fm-control", "wait", l.addr, "--for", "idle", "--timeout", "20s")
		s.judgeWaitIdle(r, l.turnRunning())
	})
	nonce := randHex(3)
	l.scenario("remote-held-turn", func(s *scen) {
		s.waitBusy("hold the turn open over ssh " + stubmodel.HangWord + " " + nonce)
		s.judgeBusy()
	})
	l.scenario("remote-interrupt", func(s *scen) {
		if l.stub.Held() == 0 {
			s.broken("no held turn to interrupt")
		}
		if r := s.interrupt(); r.code == 0 && field(r.stdout, "cancel") != "confirmed" {
			s.mark(Honest, "cancel=%s, not confirmed", field(r.stdout, "cancel"))
		}
		if n := retriedAfter(l, nonce, len(l.stub.CallsFor(nonce)), time.Second); n > 0 {
			s.survived("the CLI called the model %d more times for the turn after the interrupt", n)
		} else {
			s.note("the model saw no further call for the turn")
		}
	})
	recoverIdle(l)
	l.scenario("remote-exit", func(s *scen) { s.exit("remote-exit") })
}

// onHost moves the lab's task onto host name: an sshd whose sessions get
// the environment the lab's binaries had (its HOME, tmux server and
// FM_HOME, so the agent runs and records as in every other group), and an
// FM_HOME here that names only the host, which it returns. From here on
// the binaries run here and address the task as <name>/<id>.
func (l *lab) onHost(name string) string {
	l.t.Helper()
	f := sshlab.NewFleet(l.t)
	f.AddHost(sshlab.HostSpec{Name: name, Home: l.fmHome, Bin: fmBin,
		Env: append(append([]string(nil), l.env...), "XDG_RUNTIME_DIR="+filepath.Join(f.HostDir(name), "home"))})
	var local []string
	for _, kv := range l.env {
		if !strings.HasPrefix(kv, "FM_HOME=") && !strings.HasPrefix(kv, "FM_TMUX_") {
			local = append(local, kv)
		}
	}
	l.env = append(local, f.ClientEnv()...)
	l.addr = name + "/" + l.id
	return f.Home
}

// judgeBusy judges what status and wait say of an agent whose turn the
// model holds open: activity=idle or a wait --for busy that is not backed
// by the record is false.
func (s *scen) judgeBusy() {
	l := s.l
	st := l.fm("fm-control", "status", l.addr, "--json")
	var got struct {
		Activity string `json:"activity"`
	}
	if err := json.Unmarshal([]byte(st.stdout), &got); err != nil {
		s.mark(Honest, "status exit %d, no JSON: %s", st.code, oneLine(st.stdout+st.stderr))
	}
	w := l.fm("fm-control", "wait", l.addr, "--for", "busy", "--timeout", "10s")
	running := l.turnRunning()
	switch {
	case got.Activity == "idle":
		s.mark(False, "status said activity=idle while the record shows the turn running=%v and the model holds %d requests", running, l.stub.Held())
	case w.code == 0 && !running:
		s.mark(False, "wait --for busy exit 0 (%s), but the record shows no turn running", oneLine(w.stdout))
	case got.Activity == "busy" && w.code == 0:
		s.mark(Backed, "status said activity=busy and wait --for busy exit 0 in %v; the record shows the turn running", w.elapsed.Round(time.Millisecond))
	default:
		s.mark(Honest, "status said activity=%q, wait --for busy exit %d: %s", got.Activity, w.code, oneLine(w.stdout+w.stderr))
	}
}
