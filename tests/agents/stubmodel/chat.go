package stubmodel

import (
	"encoding/json"
	"net/http"
	"time"
)

// chat is OpenAI's chat completions API (cline's openai provider): POST
// /v1/chat/completions, streamed as chat.completion.chunk events ending in
// a [DONE] line.
type chat struct{}

func (chat) parse(body []byte) (Turn, error) {
	var req struct {
		Stream bool
		Tools  []struct {
			Type     string
			Function struct {
				Name       string
				Parameters json.RawMessage
			}
		}
		Messages []struct {
			Role    string
			Content json.RawMessage
		}
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return Turn{}, err
	}
	t := Turn{Stream: req.Stream}
	for _, tool := range req.Tools {
		if tool.Type == "function" {
			t.Tools = append(t.Tools, functionTool(tool.Function.Name, tool.Function.Parameters))
		}
	}
	for _, m := range req.Messages {
		switch m.Role {
		case "tool":
			t.addResult()
		case "user":
			// Content is a string or a list of parts.
			var s string
			if json.Unmarshal(m.Content, &s) == nil {
				t.addText(s)
				continue
			}
			var parts []struct{ Type, Text string }
			json.Unmarshal(m.Content, &parts)
			for _, p := range parts {
				if p.Type == "text" {
					t.addText(p.Text)
				}
			}
		}
	}
	return t, nil
}

func (chat) fail(w http.ResponseWriter, k Kind) { openAIFail(w, k) }

func (chat) reply(w http.ResponseWriter, t Turn, id string) out {
	c := &chatOut{id: "chatcmpl-" + id, created: time.Now().Unix()}
	if !t.Stream {
		return &whole{done: func(text string, calls []Call) error {
			msg := map[string]any{"role": "assistant", "content": text}
			finish := "stop"
			if len(calls) > 0 {
				var tc []any
				for i, call := range calls {
					tc = append(tc, chatCall(c.id, i, call, true))
				}
				msg["tool_calls"], finish = tc, "tool_calls"
			}
			doc := c.chunk("chat.completion", map[string]any{"index": 0, "message": msg, "finish_reason": finish})
			doc["usage"] = chatUsage
			return writeJSON(w, http.StatusOK, doc)
		}}
	}
	c.s = newSSE(w)
	return c
}

var chatUsage = map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}

// chatCall is call number i of reply id as a tool_calls entry; whole=false
// leaves out what a stream sends only in its first delta for the call.
func chatCall(id string, i int, c Call, whole bool) map[string]any {
	args, _ := json.Marshal(c.Args)
	call := map[string]any{"index": i, "id": "call_" + toolID(id, i), "type": "function",
		"function": map[string]any{"name": c.Name, "arguments": string(args)}}
	if !whole {
		call["function"] = map[string]any{"name": c.Name, "arguments": ""}
	}
	return call
}

type chatOut struct {
	s       sse
	id      string
	created int64
	calls   int
}

func (c *chatOut) chunk(object string, choice map[string]any) map[string]any {
	choices := []any{}
	if choice != nil {
		choices = append(choices, choice)
	}
	return map[string]any{"id": c.id, "object": object, "created": c.created, "model": "fmctl-stub", "choices": choices}
}

func (c *chatOut) delta(delta map[string]any, finish any) error {
	return c.s.event("", c.chunk("chat.completion.chunk", map[string]any{"index": 0, "delta": delta, "finish_reason": finish}))
}

func (c *chatOut) begin() error {
	return c.delta(map[string]any{"role": "assistant", "content": ""}, nil)
}

func (c *chatOut) text(delta string) error {
	return c.delta(map[string]any{"content": delta}, nil)
}

// call streams the call's name first and its arguments after, as OpenAI
// does, so a client that joins argument fragments by index is exercised.
func (c *chatOut) call(call Call) error {
	i := c.calls
	c.calls++
	if err := c.delta(map[string]any{"tool_calls": []any{chatCall(c.id, i, call, false)}}, nil); err != nil {
		return err
	}
	args, _ := json.Marshal(call.Args)
	return c.delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": string(args)}}}}, nil)
}

// end sends the finish reason, the usage chunk (an empty choices list, as
// stream_options.include_usage asks) and [DONE].
func (c *chatOut) end() error {
	finish := "stop"
	if c.calls > 0 {
		finish = "tool_calls"
	}
	if err := c.delta(map[string]any{}, finish); err != nil {
		return err
	}
	usage := c.chunk("chat.completion.chunk", nil)
	usage["usage"] = chatUsage
	if err := c.s.event("", usage); err != nil {
		return err
	}
	return c.s.raw("[DONE]")
}
