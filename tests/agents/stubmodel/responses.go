package stubmodel

import (
	"encoding/json"
	"net/http"
	"strings"
)

// responses is OpenAI's Responses API (codex): POST /v1/responses.
type responses struct{}

type responsesTool struct {
	Type       string
	Name       string
	Parameters json.RawMessage
	Tools      []responsesTool // a namespace's tools
}

func (responses) parse(body []byte) (Turn, error) {
	var req struct {
		Stream bool
		Tools  []responsesTool
		Input  []struct {
			Type    string
			Role    string
			Content []struct{ Type, Text string }
			Tools   []responsesTool // codex's "additional_tools" item
		}
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return Turn{}, err
	}
	t := Turn{Stream: req.Stream}
	var add func([]responsesTool)
	add = func(tools []responsesTool) {
		for _, tool := range tools {
			switch tool.Type {
			case "namespace":
				add(tool.Tools)
			case "function":
				t.Tools = append(t.Tools, functionTool(tool.Name, tool.Parameters))
			case "custom":
				t.Tools = append(t.Tools, Tool{Name: tool.Name, Custom: true})
			}
		}
	}
	add(req.Tools)
	for _, item := range req.Input {
		switch item.Type {
		case "additional_tools":
			add(item.Tools)
		case "function_call_output", "custom_tool_call_output":
			t.addResult()
		case "message", "":
			if item.Role != "user" {
				continue
			}
			for _, c := range item.Content {
				if c.Type == "input_text" {
					t.addText(c.Text)
				}
			}
		}
	}
	return t, nil
}

// openAICodes are OpenAI's error codes for each failing scenario, the same
// in its Responses and chat completions APIs.
var openAICodes = map[Kind]string{RateLimit: "rate_limit_exceeded", Overload: "server_is_overloaded", ServerError: "server_error"}

func openAIFail(w http.ResponseWriter, k Kind) {
	code := openAICodes[k]
	writeFailure(w, failStatus(k, http.StatusServiceUnavailable), map[string]any{"error": map[string]any{"type": code, "code": code, "message": "fmctl stub model: " + k.String()}})
}

func (responses) fail(w http.ResponseWriter, k Kind) { openAIFail(w, k) }

func (responses) reply(w http.ResponseWriter, t Turn, id string) out {
	r := &responsesOut{id: id}
	if !t.Stream {
		return &whole{done: func(text string, calls []Call) error {
			if text != "" {
				r.output = append(r.output, r.message(text))
			}
			for _, c := range calls {
				r.output = append(r.output, r.callItem(c))
			}
			return writeJSON(w, http.StatusOK, r.response("completed"))
		}}
	}
	r.s = newSSE(w)
	return r
}

type responsesOut struct {
	s      sse
	id     string
	seq    int
	output []map[string]any
	buf    strings.Builder
	inText bool
}

func (r *responsesOut) response(status string) map[string]any {
	return map[string]any{"id": "resp_" + r.id, "object": "response", "status": status, "model": "fmctl-stub",
		"output": r.output, "usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 20}}
}

func (r *responsesOut) event(typ string, fields map[string]any) error {
	fields["type"] = typ
	fields["sequence_number"] = r.seq
	r.seq++
	return r.s.event(typ, fields)
}

func (r *responsesOut) itemID() string { return toolID(r.id, len(r.output)) }

func (r *responsesOut) message(text string) map[string]any {
	return map[string]any{"type": "message", "id": "msg_" + r.itemID(), "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
}

func (r *responsesOut) callItem(c Call) map[string]any {
	if c.Custom {
		return map[string]any{"type": "custom_tool_call", "id": "ctc_" + r.itemID(), "call_id": "call_" + r.itemID(),
			"name": c.Name, "input": c.Input, "status": "completed"}
	}
	args, _ := json.Marshal(c.Args)
	return map[string]any{"type": "function_call", "id": "fc_" + r.itemID(), "call_id": "call_" + r.itemID(),
		"name": c.Name, "arguments": string(args), "status": "completed"}
}

func (r *responsesOut) begin() error {
	if err := r.event("response.created", map[string]any{"response": r.response("in_progress")}); err != nil {
		return err
	}
	return r.event("response.in_progress", map[string]any{"response": r.response("in_progress")})
}

func (r *responsesOut) text(delta string) error {
	idx := len(r.output)
	if !r.inText {
		r.inText = true
		r.buf.Reset()
		item := map[string]any{"type": "message", "id": "msg_" + r.itemID(), "role": "assistant", "status": "in_progress", "content": []any{}}
		if err := r.event("response.output_item.added", map[string]any{"output_index": idx, "item": item}); err != nil {
			return err
		}
		if err := r.event("response.content_part.added", map[string]any{"item_id": "msg_" + r.itemID(), "output_index": idx,
			"content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}}); err != nil {
			return err
		}
	}
	r.buf.WriteString(delta)
	return r.event("response.output_text.delta", map[string]any{"item_id": "msg_" + r.itemID(), "output_index": idx, "content_index": 0, "delta": delta})
}

func (r *responsesOut) closeText() error {
	if !r.inText {
		return nil
	}
	r.inText = false
	idx, text := len(r.output), r.buf.String()
	item := r.message(text)
	for _, e := range []struct {
		typ    string
		fields map[string]any
	}{
		{"response.output_text.done", map[string]any{"item_id": item["id"], "output_index": idx, "content_index": 0, "text": text}},
		{"response.content_part.done", map[string]any{"item_id": item["id"], "output_index": idx, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}},
		{"response.output_item.done", map[string]any{"output_index": idx, "item": item}},
	} {
		if err := r.event(e.typ, e.fields); err != nil {
			return err
		}
	}
	r.output = append(r.output, item)
	return nil
}

func (r *responsesOut) call(c Call) error {
	if err := r.closeText(); err != nil {
		return err
	}
	idx, item := len(r.output), r.callItem(c)
	added := map[string]any{}
	for k, v := range item {
		added[k] = v
	}
	added["status"] = "in_progress"
	delta, deltaType := item["arguments"], "response.function_call_arguments.delta"
	if c.Custom {
		added["input"], delta, deltaType = "", item["input"], "response.custom_tool_call_input.delta"
	} else {
		added["arguments"] = ""
	}
	for _, e := range []struct {
		typ    string
		fields map[string]any
	}{
		{"response.output_item.added", map[string]any{"output_index": idx, "item": added}},
		{deltaType, map[string]any{"item_id": item["id"], "output_index": idx, "delta": delta}},
		{"response.output_item.done", map[string]any{"output_index": idx, "item": item}},
	} {
		if err := r.event(e.typ, e.fields); err != nil {
			return err
		}
	}
	r.output = append(r.output, item)
	return nil
}

func (r *responsesOut) end() error {
	if err := r.closeText(); err != nil {
		return err
	}
	return r.event("response.completed", map[string]any{"response": r.response("completed")})
}
