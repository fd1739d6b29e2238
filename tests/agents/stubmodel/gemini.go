package stubmodel

import (
	"encoding/json"
	"net/http"
)

// gemini is Google's generateContent API (gemini-cli):
// POST /v1beta/models/<model>:streamGenerateContent?alt=sse, and
// :generateContent for its side requests.
type gemini struct{ stream bool }

func (g gemini) parse(body []byte) (Turn, error) {
	var req struct {
		Contents []struct {
			Role  string
			Parts []struct {
				Text             *string
				FunctionResponse json.RawMessage `json:"functionResponse"`
			}
		}
		Tools []struct {
			FunctionDeclarations []struct {
				Name                 string
				Parameters           json.RawMessage
				ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
			} `json:"functionDeclarations"`
		}
		GenerationConfig struct {
			ResponseMimeType string `json:"responseMimeType"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return Turn{}, err
	}
	t := Turn{Stream: g.stream, JSONOnly: req.GenerationConfig.ResponseMimeType == "application/json"}
	for _, tools := range req.Tools {
		for _, fd := range tools.FunctionDeclarations {
			schema := fd.ParametersJSONSchema
			if len(schema) == 0 {
				schema = fd.Parameters
			}
			t.Tools = append(t.Tools, functionTool(fd.Name, schema))
		}
	}
	for _, c := range req.Contents {
		if c.Role != "user" {
			continue
		}
		for _, p := range c.Parts {
			switch {
			case len(p.FunctionResponse) > 0:
				t.addResult()
			case p.Text != nil:
				t.addText(*p.Text)
			}
		}
	}
	return t, nil
}

// geminiStatuses are Google's status names for each failing scenario.
var geminiStatuses = map[Kind]string{RateLimit: "RESOURCE_EXHAUSTED", Overload: "UNAVAILABLE", ServerError: "INTERNAL"}

func (gemini) fail(w http.ResponseWriter, k Kind) {
	status := failStatus(k, http.StatusServiceUnavailable)
	writeFailure(w, status, map[string]any{"error": map[string]any{"code": status, "status": geminiStatuses[k], "message": "fmctl stub model: " + k.String()}})
}

func geminiChunk(parts []any, finish bool) map[string]any {
	cand := map[string]any{"index": 0, "content": map[string]any{"role": "model", "parts": parts}}
	chunk := map[string]any{"candidates": []any{cand}, "modelVersion": "fmctl-stub"}
	if finish {
		cand["finishReason"] = "STOP"
		chunk["usageMetadata"] = map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20}
	}
	return chunk
}

func geminiCall(c Call) any {
	return map[string]any{"functionCall": map[string]any{"name": c.Name, "args": c.Args}}
}

func (g gemini) reply(w http.ResponseWriter, t Turn, _ string) out {
	if !t.Stream {
		return &whole{done: func(text string, calls []Call) error {
			if t.JSONOnly {
				// gemini's side checks (next speaker, loop detection)
				// read a JSON document: let the user speak next.
				text = `{"next_speaker":"user","reasoning":"fmctl stub model"}`
			}
			parts := []any{}
			if text != "" {
				parts = append(parts, map[string]any{"text": text})
			}
			for _, c := range calls {
				parts = append(parts, geminiCall(c))
			}
			return writeJSON(w, http.StatusOK, geminiChunk(parts, true))
		}}
	}
	return &geminiStream{s: newSSE(w)}
}

type geminiStream struct {
	s     sse
	calls []any
}

func (g *geminiStream) begin() error { return nil }

func (g *geminiStream) text(delta string) error {
	return g.s.event("", geminiChunk([]any{map[string]any{"text": delta}}, false))
}

func (g *geminiStream) call(c Call) error {
	g.calls = append(g.calls, geminiCall(c))
	return nil
}

// end sends the calls with the finish reason, as Gemini does.
func (g *geminiStream) end() error {
	parts := g.calls
	if len(parts) == 0 {
		parts = []any{map[string]any{"text": ""}}
	}
	return g.s.event("", geminiChunk(parts, true))
}
