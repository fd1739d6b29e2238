package smoke

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fmctl/backends"
	"fmctl/backends/herdr"
	"fmctl/harness"
)

// TestHerdrSmoke drives the herdr adapter against a real herdr, on a
// throwaway named session whose server it starts and then stops and deletes.
// It runs only when a herdr speaking protocol 14 or newer is on PATH.
func TestHerdrSmoke(t *testing.T) {
	bin, err := exec.LookPath("herdr")
	if err != nil {
		t.Skip("herdr is not on PATH; this smoke test needs a real herdr (https://herdr.dev)")
	}
	session := fmt.Sprintf("fmctl-smoke-%d", os.Getpid())
	if running, protocol := herdrStatus(t, bin, session); protocol < 14 {
		t.Skipf("herdr on PATH speaks protocol %d; the adapter needs 14 or newer", protocol)
	} else if running {
		t.Fatalf("herdr session %s already has a server; refusing to touch it", session)
	}
	startHerdrSmokeServer(t, bin, session)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	h := herdr.New(backends.NewExecRunner(""), herdr.Options{Binary: bin, DefaultSession: session})
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fields, err := h.Create(ctx, backends.CreateSpec{TaskID: "smoke", Label: "fm-smoke", Dir: dir})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	ep := backends.Endpoint{Backend: "herdr", TaskID: "smoke", Fields: map[string]string{}}
	for _, f := range fields {
		ep.Fields[f.Key] = f.Value
	}
	ep.Target = ep.Fields["window"]
	if err := h.ValidateRecord(ep); err != nil {
		t.Fatalf("Create returned a record ValidateRecord refuses: %v (%v)", err, fields)
	}
	if _, err := h.Create(ctx, backends.CreateSpec{TaskID: "smoke", Label: "fm-smoke", Dir: dir}); err == nil {
		t.Fatal("a second tab with the same label was created")
	}

	herdrEventually(t, "the fresh pane is agent-free in the created directory", func() (bool, string) {
		obs := h.AgentState(ctx, ep)
		return obs.State == backends.StateDead && obs.CurrentPath == dir, fmt.Sprintf("%+v", obs)
	})
	herdrEventually(t, "CurrentPath is the created directory", func() (bool, string) {
		got, err := h.CurrentPath(ctx, ep)
		return err == nil && got == dir, fmt.Sprintf("%q, %v", got, err)
	})

	marker := fmt.Sprintf("smoke%d", time.Now().UnixNano())
	if err := h.SendText(ctx, ep, "echo one-"+marker+"\necho two-"+marker); err != nil {
		t.Fatalf("SendText: %v", err)
	}
	if err := h.SendKey(ctx, ep, harness.KeyEnter); err != nil {
		t.Fatalf("SendKey Enter: %v", err)
	}
	herdrEventually(t, "both pasted lines ran", func() (bool, string) {
		s, err := h.Capture(ctx, ep)
		if err != nil {
			return false, err.Error()
		}
		seen := map[string]bool{}
		for _, l := range s.Lines {
			seen[strings.TrimSpace(l)] = true
		}
		return seen["one-"+marker] && seen["two-"+marker], strings.Join(s.Lines, "\n")
	})
	for _, k := range harness.NamedKeys {
		if err := h.SendKey(ctx, ep, k); err != nil {
			t.Fatalf("SendKey %s: %v", k, err)
		}
	}

	if err := h.Kill(ctx, ep); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if obs := h.AgentState(ctx, ep); obs.State != backends.StateMissing {
		t.Fatalf("AgentState after Kill: %+v", obs)
	}
	if err := h.Kill(ctx, ep); err != nil {
		t.Fatalf("a second Kill of a closed pane: %v", err)
	}
}

// herdrStatus reads whether the session has a server and the client's protocol.
func herdrStatus(t *testing.T, bin, session string) (running bool, protocol int) {
	t.Helper()
	out, err := exec.Command(bin, "status", "--session", session, "--json").Output()
	if err != nil {
		t.Fatalf("herdr status --json: %v", err)
	}
	var st struct {
		Client struct {
			Protocol int `json:"protocol"`
		} `json:"client"`
		Server struct {
			Running bool `json:"running"`
		} `json:"server"`
	}
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("herdr status --json: %v (%s)", err, out)
	}
	return st.Server.Running, st.Client.Protocol
}

// startHerdrSmokeServer runs a headless server for the session and registers
// its teardown: stop and delete that one named session (never `server stop`,
// which an ambient environment could point at another server), then end the
// process this test started if it is still there.
func startHerdrSmokeServer(t *testing.T, bin, session string, env ...string) {
	t.Helper()
	srv := exec.Command(bin, "--session", session, "server")
	srv.Dir = t.TempDir()
	// A pane's shell inherits the server's environment: env reaches the
	// agents launched in it (the fake agent's PATH and switches).
	srv.Env = append(os.Environ(), env...)
	if err := srv.Start(); err != nil {
		t.Fatalf("start herdr server: %v", err)
	}
	done := make(chan struct{})
	go func() { srv.Wait(); close(done) }()
	t.Cleanup(func() {
		for _, args := range [][]string{{"session", "stop", session}, {"session", "delete", session}} {
			if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
				t.Logf("herdr %s: %v (%s)", strings.Join(args, " "), err, out)
			}
		}
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			srv.Process.Kill()
			<-done
		}
	})
	herdrEventually(t, "the smoke session's server runs", func() (bool, string) {
		running, _ := herdrStatus(t, bin, session)
		return running, "not running"
	})
}

func herdrEventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s; last: %s", what, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
