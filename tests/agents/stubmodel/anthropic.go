package stubmodel

import (
	"encoding/json"
	"net/http"
)

// anthropic is the Messages API (claude, and opencode and pi as the tier
// configures them): POST /v1/messages.
type anthropic struct{}

func (anthropic) parse(body []byte) (Turn, error) {
	var req struct {
		Stream   bool
		Messages []struct {
			Role    string
			Content json.RawMessage
		}
		Tools []struct {
			Name        string
			Type        string
			InputSchema json.RawMessage `json:"input_schema"`
		}
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return Turn{}, err
	}
	t := Turn{Stream: req.Stream}
	for _, tool := range req.Tools {
		t.Tools = append(t.Tools, functionTool(tool.Name, tool.InputSchema))
	}
	for _, m := range req.Messages {
		if m.Role != "user" {
			continue
		}
		var text string
		if json.Unmarshal(m.Content, &text) == nil {
			t.addText(text)
			continue
		}
		var blocks []struct {
			Type string
			Text string
		}
		json.Unmarshal(m.Content, &blocks)
		for _, b := range blocks {
			switch b.Type {
			case "tool_result":
				t.addResult()
			case "text":
				t.addText(b.Text)
			}
		}
	}
	return t, nil
}

// anthropicErrors are the error types of each failing scenario.
var anthropicErrors = map[Kind]string{RateLimit: "rate_limit_error", Overload: "overloaded_error", ServerError: "api_error"}

func (anthropic) fail(w http.ResponseWriter, k Kind) {
	writeFailure(w, failStatus(k, 529), map[string]any{"type": "error",
		"error": map[string]any{"type": anthropicErrors[k], "message": "fmctl stub model: " + k.String()}})
}

func (anthropic) reply(w http.ResponseWriter, t Turn, id string) out {
	message := map[string]any{
		"id": "msg_" + id, "type": "message", "role": "assistant", "model": "fmctl-stub",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 1},
	}
	if !t.Stream {
		return &whole{done: func(text string, calls []Call) error {
			content, stop := []any{}, "end_turn"
			if text != "" {
				content = append(content, map[string]any{"type": "text", "text": text})
			}
			for i, c := range calls {
				content = append(content, map[string]any{"type": "tool_use", "id": toolID(id, i), "name": c.Name, "input": c.Args})
				stop = "tool_use"
			}
			message["content"], message["stop_reason"] = content, stop
			message["usage"] = map[string]any{"input_tokens": 10, "output_tokens": 10}
			return writeJSON(w, http.StatusOK, message)
		}}
	}
	return &anthropicStream{s: newSSE(w), id: id, message: message}
}

type anthropicStream struct {
	s       sse
	id      string
	message map[string]any
	index   int  // the next content block's index
	inText  bool // a text block is open
	tool    bool // a tool_use block was sent
}

func (a *anthropicStream) begin() error {
	if err := a.s.event("message_start", map[string]any{"type": "message_start", "message": a.message}); err != nil {
		return err
	}
	return a.s.event("ping", map[string]any{"type": "ping"})
}

func (a *anthropicStream) text(delta string) error {
	if !a.inText {
		a.inText = true
		if err := a.s.event("content_block_start", map[string]any{"type": "content_block_start", "index": a.index,
			"content_block": map[string]any{"type": "text", "text": ""}}); err != nil {
			return err
		}
	}
	return a.s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": a.index,
		"delta": map[string]any{"type": "text_delta", "text": delta}})
}

func (a *anthropicStream) closeText() error {
	if !a.inText {
		return nil
	}
	a.inText = false
	a.index++
	return a.s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": a.index - 1})
}

func (a *anthropicStream) call(c Call) error {
	if err := a.closeText(); err != nil {
		return err
	}
	args, err := json.Marshal(c.Args)
	if err != nil {
		return err
	}
	events := []struct {
		name string
		data map[string]any
	}{
		{"content_block_start", map[string]any{"type": "content_block_start", "index": a.index,
			"content_block": map[string]any{"type": "tool_use", "id": toolID(a.id, a.index), "name": c.Name, "input": map[string]any{}}}},
		{"content_block_delta", map[string]any{"type": "content_block_delta", "index": a.index,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(args)}}},
		{"content_block_stop", map[string]any{"type": "content_block_stop", "index": a.index}},
	}
	for _, e := range events {
		if err := a.s.event(e.name, e.data); err != nil {
			return err
		}
	}
	a.index++
	a.tool = true
	return nil
}

func (a *anthropicStream) end() error {
	if err := a.closeText(); err != nil {
		return err
	}
	stop := "end_turn"
	if a.tool {
		stop = "tool_use"
	}
	if err := a.s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 10}}); err != nil {
		return err
	}
	return a.s.event("message_stop", map[string]any{"type": "message_stop"})
}
