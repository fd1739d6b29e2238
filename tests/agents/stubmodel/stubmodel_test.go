package stubmodel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseScenario(t *testing.T) {
	cases := []struct {
		prompt string
		want   Scenario
	}{
		{"hello", Scenario{Kind: Reply}},
		{"a turn fmhang 1a2b", Scenario{Kind: Hang}},
		{"stream fmlong please", Scenario{Kind: Long, Duration: DefaultLong}},
		{"stream fmlong5", Scenario{Kind: Long, Duration: 5 * time.Second}},
		{"run fmtool /tmp/w t. now", Scenario{Kind: ToolCalls, Dir: "/tmp/w"}},
		{"run fmtool /tmp/wt.", Scenario{Kind: ToolCalls, Dir: "/tmp/wt"}},
		{"fmtool without a dir", Scenario{Kind: ToolCalls}},
		{"fmtool20 /w", Scenario{Kind: ToolCalls, Dir: "/w", Duration: 20 * time.Second}},
		{"fmrate", Scenario{Kind: RateLimit, Failures: 2}},
		{"fmrate4 x", Scenario{Kind: RateLimit, Failures: 4}},
		{"fmoverload1", Scenario{Kind: Overload, Failures: 1}},
		{"fm5xx", Scenario{Kind: ServerError, Failures: 2}},
		{"fmcut", Scenario{Kind: Cut, Failures: 1}},
		{"fmdown3", Scenario{Kind: Down, Duration: 3 * time.Second}},
		{"xfmhang is not a word", Scenario{Kind: Reply}},
	}
	for _, c := range cases {
		if got := ParseScenario(c.prompt); got != c.want {
			t.Errorf("ParseScenario(%q) = %+v, want %+v", c.prompt, got, c.want)
		}
	}
}

func TestNewestPromptDecides(t *testing.T) {
	cases := []struct {
		name, path, body string
		prompt           string
		results          int
	}{
		{"anthropic newest", "/v1/messages", `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"x"},{"role":"user","content":[{"type":"text","text":"go fmhang"}]}]}`, "go fmhang", 0},
		{"anthropic older only", "/v1/messages", `{"messages":[{"role":"user","content":"go fmhang"},{"role":"assistant","content":"x"},{"role":"user","content":"next"}]}`, "next", 0},
		{"anthropic merged turns", "/v1/messages", `{"messages":[{"role":"user","content":[{"type":"text","text":"hang fmhang"},{"type":"text","text":"[Request interrupted by user]"},{"type":"text","text":"q1 plain"}]}]}`, "q1 plain", 0},
		{"anthropic prompt after an interrupted tool", "/v1/messages", `{"messages":[{"role":"user","content":"fmtool40 /w"},{"role":"assistant","content":[{"type":"tool_use"}]},{"role":"user","content":[{"type":"tool_result"},{"type":"text","text":"[Request interrupted by user for tool use]"},{"type":"text","text":"next fmrate60"}]}]}`, "next fmrate60", 0},
		{"anthropic tool results", "/v1/messages", `{"messages":[{"role":"user","content":"fmtool /w"},{"role":"assistant","content":[{"type":"tool_use"}]},{"role":"user","content":[{"type":"tool_result"},{"type":"text","text":"<system-reminder>x</system-reminder>"}]}]}`, "fmtool /w", 1},
		{"responses newest", "/v1/responses", `{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"fmhang now"}]}]}`, "fmhang now", 0},
		{"responses skips codex's own tags", "/v1/responses", `{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"p1"}]},{"type":"message","role":"user","content":[{"type":"input_text","text":"<turn_aborted>\nx\n</turn_aborted>"}]}]}`, "p1", 0},
		{"responses tool results", "/v1/responses", `{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"p"}]},{"type":"custom_tool_call"},{"type":"custom_tool_call_output"},{"type":"function_call_output"}]}`, "p", 2},
		{"chat newest", "/v1/chat/completions", `{"messages":[{"role":"system","content":"s"},{"role":"user","content":"a"},{"role":"assistant","content":"x"},{"role":"user","content":[{"type":"text","text":"go fmhang"}]}]}`, "go fmhang", 0},
		{"chat tool results", "/v1/chat/completions", `{"messages":[{"role":"user","content":"fmtool /w"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1"}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}`, "fmtool /w", 1},
		{"gemini newest", "/v1beta/models/m:streamGenerateContent", `{"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":"model","parts":[]},{"role":"user","parts":[{"text":"wait fmhang"}]}]}`, "wait fmhang", 0},
		{"gemini function responses", "/v1beta/models/m:streamGenerateContent", `{"contents":[{"role":"user","parts":[{"text":"p"}]},{"role":"model","parts":[{"functionCall":{}}]},{"role":"user","parts":[{"functionResponse":{"name":"x"}}]}]}`, "p", 1},
	}
	for _, c := range cases {
		d, _, ok := route(http.MethodPost, c.path)
		if !ok {
			t.Fatalf("%s: no dialect for %s", c.name, c.path)
		}
		turn, err := d.parse([]byte(c.body))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if turn.Prompt != c.prompt || turn.ToolResults != c.results {
			t.Errorf("%s: prompt %q with %d tool results, want %q with %d", c.name, turn.Prompt, turn.ToolResults, c.prompt, c.results)
		}
	}
}

// fixture is one request a real CLI sent, recorded from the lab.
type fixture struct {
	name string
	Path string
	Body json.RawMessage
}

func loadFixtures(t *testing.T) []fixture {
	t.Helper()
	paths, _ := filepath.Glob("testdata/*.json")
	if len(paths) == 0 {
		t.Fatal("no recorded requests in testdata")
	}
	var out []fixture
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f := fixture{name: strings.TrimSuffix(filepath.Base(p), ".json")}
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, f)
	}
	return out
}

// The tools each recorded CLI must be called with.
var wantTools = map[string][2]string{
	"claude":   {"Bash", "Write"},
	"codex":    {"exec", "exec"},
	"gemini":   {"run_shell_command", "write_file"},
	"pi":       {"bash", "write"},
	"opencode": {"bash", "write"},
	"cline":    {"run_commands", "editor"},
}

// TestRecordedRequests reads each CLI's recorded request: the prompt is the
// launch prompt, and the tool scenario calls that CLI's own shell and write
// tools with the arguments their schemas declare.
func TestRecordedRequests(t *testing.T) {
	for _, f := range loadFixtures(t) {
		d, _, ok := route(http.MethodPost, f.Path)
		if !ok {
			t.Fatalf("%s: no dialect for %s", f.name, f.Path)
		}
		turn, err := d.parse(f.Body)
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		if !strings.HasPrefix(turn.Prompt, "Read the brief at ") || !turn.Stream {
			t.Errorf("%s: prompt %q stream=%v, want the launch prompt, streamed", f.name, turn.Prompt, turn.Stream)
		}
		cli, _, _ := strings.Cut(f.name, "-")
		want := wantTools[cli]
		shell, ok := nextCall(turn, Scenario{Kind: ToolCalls, Dir: "/tmp/w"})
		if !ok || shell.Name != want[0] {
			t.Fatalf("%s: shell call %+v, want %s", f.name, shell, want[0])
		}
		command := shell.Args["command"]
		if cmds, ok := shell.Args["commands"].([]string); ok && len(cmds) == 1 {
			command = cmds[0]
		}
		if !shell.Custom && command != ShellCommand("/tmp/w", 0) && shell.Args["cmd"] != ShellCommand("/tmp/w", 0) {
			t.Errorf("%s: shell call args %v lack the command", f.name, shell.Args)
		}
		if shell.Custom && !strings.Contains(shell.Input, "tools.exec_command") {
			t.Errorf("%s: exec input %q does not run exec_command", f.name, shell.Input)
		}
		turn.ToolResults = 1
		write, ok := nextCall(turn, Scenario{Kind: ToolCalls, Dir: "/tmp/w"})
		if !ok || write.Name != want[1] {
			t.Fatalf("%s: write call %+v, want %s", f.name, write, want[1])
		}
		for _, call := range []Call{shell, write} {
			if call.Custom {
				continue
			}
			tool, _ := findTool(turn, []string{call.Name})
			for _, req := range tool.Required {
				if _, ok := call.Args[req]; !ok {
					t.Errorf("%s: the %s call lacks the required %q: %v", f.name, call.Name, req, call.Args)
				}
			}
		}
		turn.ToolResults = 2
		if c, ok := nextCall(turn, Scenario{Kind: ToolCalls, Dir: "/tmp/w"}); ok {
			t.Errorf("%s: a third call %+v; the scenario makes two, then replies", f.name, c)
		}
	}
}

// event is one server-sent event.
type event struct {
	name string
	data map[string]any
}

// post sends body to the stub and returns the status, the headers and the
// events (or the JSON document) it answered with; err is a read that broke.
func post(t *testing.T, s *Server, path string, body []byte) (int, http.Header, []event, error) {
	t.Helper()
	resp, err := http.Post(s.URL+path, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	var events []event
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var doc map[string]any
		err := json.NewDecoder(resp.Body).Decode(&doc)
		return resp.StatusCode, resp.Header, []event{{name: "json", data: doc}}, err
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case line == "data: [DONE]":
			// chat completions' end of stream: no JSON.
			events = append(events, event{name: "[DONE]"})
		case strings.HasPrefix(line, "data: "):
			var data map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &data); err != nil {
				t.Fatalf("event %s: data is not JSON: %s", name, line)
			}
			events = append(events, event{name, data})
			name = ""
		}
	}
	return resp.StatusCode, resp.Header, events, sc.Err()
}

// withPrompt replaces the recorded launch prompt in a request body.
func withPrompt(t *testing.T, body []byte, prompt string) []byte {
	t.Helper()
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				v[k] = walk(x)
			}
		case []any:
			for i, x := range v {
				v[i] = walk(x)
			}
		case string:
			if strings.HasPrefix(v, "Read the brief at ") {
				return prompt
			}
		}
		return v
	}
	out, _ := json.Marshal(walk(doc))
	return out
}

func start(t *testing.T) *Server {
	t.Helper()
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// checkStream checks a streamed reply as its dialect's client reads it: the
// events that open and close it, text deltas, and each tool call's name and
// arguments. It returns the text and the tool names.
func checkStream(t *testing.T, name, dialect string, events []event) (text string, tools []string) {
	t.Helper()
	if len(events) < 2 {
		t.Fatalf("%s: %d events", name, len(events))
	}
	first, last := events[0], events[len(events)-1]
	switch dialect {
	case "anthropic":
		if first.name != "message_start" || last.name != "message_stop" {
			t.Fatalf("%s: stream runs %s..%s, want message_start..message_stop", name, first.name, last.name)
		}
		open := map[float64]string{}
		var args strings.Builder
		for _, e := range events {
			if e.data["type"] != e.name {
				t.Errorf("%s: event %s carries type %v", name, e.name, e.data["type"])
			}
			idx, _ := e.data["index"].(float64)
			switch e.name {
			case "content_block_start":
				block := e.data["content_block"].(map[string]any)
				open[idx] = block["type"].(string)
				if block["type"] == "tool_use" {
					tools = append(tools, block["name"].(string))
					args.Reset()
				}
			case "content_block_delta":
				delta := e.data["delta"].(map[string]any)
				switch delta["type"] {
				case "text_delta":
					text += delta["text"].(string)
				case "input_json_delta":
					args.WriteString(delta["partial_json"].(string))
				}
			case "content_block_stop":
				if open[idx] == "tool_use" && !json.Valid([]byte(args.String())) {
					t.Errorf("%s: tool input %q is not JSON", name, args.String())
				}
				delete(open, idx)
			}
		}
		if len(open) > 0 {
			t.Errorf("%s: blocks left open: %v", name, open)
		}
	case "responses":
		if first.name != "response.created" || last.name != "response.completed" {
			t.Fatalf("%s: stream runs %s..%s", name, first.name, last.name)
		}
		for i, e := range events {
			if e.data["type"] != e.name || e.data["sequence_number"] != float64(i) {
				t.Errorf("%s: event %d %s carries type %v seq %v", name, i, e.name, e.data["type"], e.data["sequence_number"])
			}
			switch e.name {
			case "response.output_text.delta":
				text += e.data["delta"].(string)
			case "response.output_item.done":
				item := e.data["item"].(map[string]any)
				if item["type"] == "custom_tool_call" || item["type"] == "function_call" {
					tools = append(tools, item["name"].(string))
					if item["call_id"] == "" {
						t.Errorf("%s: a call without call_id", name)
					}
				}
			}
		}
		if out := last.data["response"].(map[string]any)["output"].([]any); len(out) == 0 {
			t.Errorf("%s: response.completed lists no output", name)
		}
	case "chat":
		text, tools = checkChatStream(t, name, events)
	case "gemini":
		for i, e := range events {
			cands := e.data["candidates"].([]any)
			cand := cands[0].(map[string]any)
			for _, p := range cand["content"].(map[string]any)["parts"].([]any) {
				part := p.(map[string]any)
				if s, ok := part["text"].(string); ok {
					text += s
				}
				if fc, ok := part["functionCall"].(map[string]any); ok {
					tools = append(tools, fc["name"].(string))
				}
			}
			if _, done := cand["finishReason"]; done != (i == len(events)-1) {
				t.Errorf("%s: finishReason on event %d of %d", name, i, len(events))
			}
		}
	}
	return text, tools
}

// checkChatStream reads chat completion chunks as an OpenAI client does:
// content deltas, tool calls opened with an id and a name and whose
// argument fragments join by index into JSON, one finish reason, the usage
// chunk, then [DONE].
func checkChatStream(t *testing.T, name string, events []event) (text string, tools []string) {
	t.Helper()
	n := len(events)
	if n < 3 || events[n-1].name != "[DONE]" {
		t.Fatalf("%s: %d events, the last %q; want chunks ending in [DONE]", name, n, events[n-1].name)
	}
	if usage := events[n-2].data; usage["usage"] == nil || len(usage["choices"].([]any)) != 0 {
		t.Errorf("%s: the chunk before [DONE] is %v, want the usage alone", name, usage)
	}
	args := map[float64]*strings.Builder{}
	finishes := 0
	for i, e := range events[:n-2] {
		if e.data["object"] != "chat.completion.chunk" || e.data["id"] != events[0].data["id"] {
			t.Errorf("%s: chunk %d is %v %v", name, i, e.data["object"], e.data["id"])
		}
		choice := e.data["choices"].([]any)[0].(map[string]any)
		if choice["finish_reason"] != nil {
			finishes++
			want := "stop"
			if len(tools) > 0 {
				want = "tool_calls"
			}
			if choice["finish_reason"] != want || i != n-3 {
				t.Errorf("%s: finish_reason %v on chunk %d of %d, want %s on the last", name, choice["finish_reason"], i, n, want)
			}
		}
		delta := choice["delta"].(map[string]any)
		if s, ok := delta["content"].(string); ok {
			text += s
		}
		calls, _ := delta["tool_calls"].([]any)
		for _, c := range calls {
			call := c.(map[string]any)
			idx := call["index"].(float64)
			fn := call["function"].(map[string]any)
			if args[idx] == nil {
				if call["id"] == nil || call["type"] != "function" {
					t.Errorf("%s: call %v opens without an id", name, call)
				}
				args[idx] = &strings.Builder{}
				tools = append(tools, fn["name"].(string))
			}
			args[idx].WriteString(fn["arguments"].(string))
		}
	}
	if finishes != 1 {
		t.Errorf("%s: %d finish reasons, want 1", name, finishes)
	}
	for idx, a := range args {
		if !json.Valid([]byte(a.String())) {
			t.Errorf("%s: call %v's arguments %q are not JSON", name, idx, a.String())
		}
	}
	return text, tools
}

func dialectOf(path string) string {
	_, name, _ := route(http.MethodPost, path)
	return name
}

// TestRepliesInEachDialect plays each recorded request against the stub as a
// reply and as the tool scenario's first call.
func TestRepliesInEachDialect(t *testing.T) {
	s := start(t)
	for _, f := range loadFixtures(t) {
		dialect := dialectOf(f.Path)
		status, _, events, err := post(t, s, f.Path, f.Body)
		if err != nil || status != 200 {
			t.Fatalf("%s: status %d, %v", f.name, status, err)
		}
		if text, tools := checkStream(t, f.name, dialect, events); text != "fmctl stub model: done." || len(tools) != 0 {
			t.Errorf("%s: reply text %q tools %v", f.name, text, tools)
		}
		cli, _, _ := strings.Cut(f.name, "-")
		status, _, events, err = post(t, s, f.Path, withPrompt(t, f.Body, "do it fmtool /tmp/w"))
		if err != nil || status != 200 {
			t.Fatalf("%s tool: status %d, %v", f.name, status, err)
		}
		if _, tools := checkStream(t, f.name+" tool", dialect, events); len(tools) != 1 || tools[0] != wantTools[cli][0] {
			t.Errorf("%s: tool calls %v, want [%s]", f.name, tools, wantTools[cli][0])
		}
	}
}

// TestFailuresThenSuccess: each failing scenario fails its attempts with the
// dialect's status and retry-after, then serves the reply.
func TestFailuresThenSuccess(t *testing.T) {
	s := start(t)
	for _, f := range loadFixtures(t) {
		dialect := dialectOf(f.Path)
		for _, c := range []struct {
			word   string
			status int
		}{{"fmrate2", 429}, {"fmoverload1", map[string]int{"anthropic": 529}[dialect]}, {"fm5xx1", 500}} {
			if c.status == 0 {
				c.status = 503
			}
			body := withPrompt(t, f.Body, "try "+c.word+" "+f.name)
			fails := int(c.word[len(c.word)-1] - '0')
			for i := 1; i <= fails+1; i++ {
				status, h, events, err := post(t, s, f.Path, body)
				if err != nil {
					t.Fatalf("%s %s attempt %d: %v", f.name, c.word, i, err)
				}
				if i <= fails {
					if status != c.status || (status != 500 && h.Get("retry-after") != "1") {
						t.Errorf("%s %s attempt %d: status %d retry-after %q, want %d", f.name, c.word, i, status, h.Get("retry-after"), c.status)
					}
					continue
				}
				if status != 200 {
					t.Fatalf("%s %s attempt %d: status %d, want the reply", f.name, c.word, i, status)
				}
				checkStream(t, f.name, dialect, events)
			}
		}
	}
}

func TestCutResetsMidStreamThenServes(t *testing.T) {
	s := start(t)
	for _, f := range loadFixtures(t) {
		body := withPrompt(t, f.Body, "answer fmcut "+f.name)
		status, _, events, err := post(t, s, f.Path, body)
		if status != 200 || len(events) == 0 || err == nil {
			t.Fatalf("%s cut attempt: status %d, %d events, err %v; want a stream that starts and breaks", f.name, status, len(events), err)
		}
		if !errors.Is(err, syscall.ECONNRESET) && !strings.Contains(err.Error(), "unexpected EOF") {
			t.Errorf("%s cut attempt broke with %v, want a reset", f.name, err)
		}
		if status, _, events, err := post(t, s, f.Path, body); status != 200 || err != nil {
			t.Fatalf("%s retry: status %d, %v", f.name, status, err)
		} else {
			checkStream(t, f.name, dialectOf(f.Path), events)
		}
	}
}

// TestChatWithoutStream: a chat completions request that asks for no
// stream gets one chat.completion document, its tool calls whole.
func TestChatWithoutStream(t *testing.T) {
	s := start(t)
	var f fixture
	for _, x := range loadFixtures(t) {
		if dialectOf(x.Path) == "chat" {
			f = x
		}
	}
	var doc map[string]any
	if err := json.Unmarshal(withPrompt(t, f.Body, "do it fmtool /tmp/w"), &doc); err != nil {
		t.Fatal(err)
	}
	doc["stream"] = false
	body, _ := json.Marshal(doc)
	status, _, events, err := post(t, s, f.Path, body)
	if status != 200 || err != nil || events[0].name != "json" {
		t.Fatalf("status %d, %v, %v; want one JSON document", status, err, events)
	}
	got := events[0].data
	choice := got["choices"].([]any)[0].(map[string]any)
	calls, _ := choice["message"].(map[string]any)["tool_calls"].([]any)
	if got["object"] != "chat.completion" || choice["finish_reason"] != "tool_calls" || len(calls) != 1 {
		t.Fatalf("answer %v, want a chat.completion with one tool call", got)
	}
	fn := calls[0].(map[string]any)["function"].(map[string]any)
	if fn["name"] != "run_commands" || !json.Valid([]byte(fn["arguments"].(string))) {
		t.Errorf("call %v, want run_commands with JSON arguments", fn)
	}
}

func TestDownRefusesThenComesBack(t *testing.T) {
	s := start(t)
	f := loadFixtures(t)[0]
	body := withPrompt(t, f.Body, "answer fmdown1")
	if _, _, _, err := post(t, s, f.Path, body); err == nil {
		t.Fatal("the request that takes the API down was answered")
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	if _, err := client.Post(s.URL+f.Path, "application/json", bytes.NewReader(body)); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("while down: %v, want connection refused", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := client.Post(s.URL+f.Path, "application/json", bytes.NewReader(body))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("back up: status %d", resp.StatusCode)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still down after 5 s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestHangAndLongHoldTheTurn(t *testing.T) {
	s := start(t)
	for _, f := range loadFixtures(t) {
		t.Run(f.name, func(t *testing.T) { holdTheTurn(t, s, f) })
	}
}

func holdTheTurn(t *testing.T, s *Server, f fixture) {
	for _, word := range []string{"fmhang", "fmlong"} {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+f.Path, bytes.NewReader(withPrompt(t, f.Body, "go "+word)))
		done := make(chan int, 1)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			n := 0
			if err == nil {
				n, _ = countLines(resp)
			}
			done <- n
		}()
		deadline := time.Now().Add(3 * time.Second)
		for s.Held() == 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(700 * time.Millisecond)
		if s.Held() != 1 {
			t.Fatalf("%s: held %d, want 1", word, s.Held())
		}
		cancelled := time.Now()
		cancel()
		n := <-done
		if word == "fmlong" && n < 3 {
			t.Errorf("fmlong streamed %d lines in 0.7 s, want a line every 200 ms", n)
		}
		deadline = time.Now().Add(3 * time.Second)
		for s.Held() != 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if s.Held() != 0 {
			t.Errorf("%s: still held after the client went away", word)
		}
		reqs := s.Requests()
		if r := reqs[len(reqs)-1]; r.Done.Before(cancelled) {
			t.Errorf("%s: Done %v is before the client went away at %v", word, r.Done, cancelled)
		}
	}
}

func countLines(resp *http.Response) (int, error) {
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	n := 0
	for sc.Scan() {
		if strings.Contains(sc.Text(), "Streaming line") {
			n++
		}
	}
	return n, sc.Err()
}

// TestSideRequestIsNeverHeld: a call offering no tools (claude's session
// title request quotes the prompt) gets a plain reply whatever word the
// prompt holds, and is no call of the turn.
func TestSideRequestIsNeverHeld(t *testing.T) {
	s := start(t)
	f := loadFixtures(t)[0]
	var doc map[string]any
	if err := json.Unmarshal(withPrompt(t, f.Body, "title for go fmhang 7c7c"), &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "tools")
	body, _ := json.Marshal(doc)
	status, _, events, err := post(t, s, f.Path, body)
	if status != 200 || err != nil {
		t.Fatalf("side request: status %d, %v; want the reply", status, err)
	}
	checkStream(t, f.name, dialectOf(f.Path), events)
	if n := len(s.CallsFor("7c7c")); n != 0 || s.Held() != 0 {
		t.Errorf("side request counted as %d calls of the turn, %d held", n, s.Held())
	}
}
