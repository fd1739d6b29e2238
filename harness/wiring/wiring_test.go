package wiring

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"fmctl/harness"
)

func geminiTask(t *testing.T) (harness.Harness, Task, harness.WiringTarget) {
	t.Helper()
	h, ok := harness.Lookup("gemini")
	if !ok {
		t.Fatal("no gemini row")
	}
	dir := t.TempDir()
	task := Task{Worktree: filepath.Join(dir, "wt"), StateDir: filepath.Join(dir, "state"), ID: "g1"}
	for _, d := range []string{task.Worktree, task.StateDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return h, task, harness.WiringTarget{FMControl: "/bin/fm-control", Home: dir, ID: "g1", Gen: "s1.1"}
}

func TestGeminiWiringKeepsTheUsersSettingsAndRetiresOnlyFmctls(t *testing.T) {
	h, task, w := geminiTask(t)
	p := filepath.Join(task.Worktree, ".gemini", "settings.json")
	user := `{"model":{"name":"gemini-2.5-pro"},"hooks":{"AfterAgent":[{"hooks":[{"type":"command","command":"echo mine"}]}]}}`
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(user), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Install(h, task, w); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("installed file is not JSON: %v\n%s", err, data)
	}
	if m, _ := doc["model"].(map[string]any); m["name"] != "gemini-2.5-pro" {
		t.Fatalf("the user's model key changed:\n%s", data)
	}
	tel, _ := h.Telemetry()
	if n := strings.Count(string(data), harness.TelemetryMarker); n != len(tel.Events) {
		t.Fatalf("%d fmctl hooks, want %d:\n%s", n, len(tel.Events), data)
	}
	if !strings.Contains(string(data), "echo mine") {
		t.Fatalf("the user's AfterAgent hook is gone:\n%s", data)
	}

	if err := Retire(h, task); err != nil {
		t.Fatal(err)
	}
	back, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("retire deleted the user's file: %v", err)
	}
	var got, want map[string]any
	json.Unmarshal(back, &got)
	json.Unmarshal([]byte(user), &want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("retire did not give back the user's settings:\n%s", back)
	}
}

func TestGeminiWiringAloneIsDeletedOnRetire(t *testing.T) {
	h, task, w := geminiTask(t)
	if err := Install(h, task, w); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(task.Worktree, ".gemini", "settings.json")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("install wrote no settings file: %v", err)
	}
	if err := Retire(h, task); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatalf("retire left fmctl's own settings file (err=%v)", err)
	}
}

func TestGeminiWiringRefusesASymlinkedGeminiDir(t *testing.T) {
	h, task, w := geminiTask(t)
	outside := filepath.Join(filepath.Dir(task.Worktree), "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	theirs := []byte(`{"keep":true}`)
	if err := os.WriteFile(filepath.Join(outside, "settings.json"), theirs, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(task.Worktree, ".gemini")); err != nil {
		t.Fatal(err)
	}
	if err := Install(h, task, w); err == nil {
		t.Fatal("install wrote through a symlinked .gemini")
	}
	if err := Retire(h, task); err == nil || !strings.Contains(err.Error(), "is a symlink") {
		t.Fatalf("retire through a symlinked .gemini: err = %v, want a refusal", err)
	}
	if got, _ := os.ReadFile(filepath.Join(outside, "settings.json")); string(got) != string(theirs) {
		t.Fatalf("the file behind the symlink changed: %s", got)
	}
}
