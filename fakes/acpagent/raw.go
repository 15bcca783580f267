package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"

	"github.com/wharfhub/wharf/fakes/agentscript"
)

// runRaw is the plain writer: it answers initialize, session/new and
// session/prompt without the SDK, and answers every prompt with the flood
// script pre-encoded and written in one go, followed by its response
// (with bigMiB > 0: one chunk of that many MiB instead). With
// legacyModels, session/new offers models as Gemini CLI does (a `models`
// object, no config option) and session/set_model takes one of them.
func runRaw(in io.Reader, out io.Writer, bigMiB int, legacyModels bool) int {
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				SessionID string `json:"sessionId"`
				ModelID   string `json:"modelId"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || len(m.ID) == 0 {
			continue
		}
		reply := func(result string) {
			out.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + "}\n"))
		}
		switch m.Method {
		case "initialize":
			reply(`{"protocolVersion":1,"authMethods":[],"agentCapabilities":{}}`)
		case "session/new":
			if legacyModels {
				reply(`{"sessionId":"raw-1","models":{"availableModels":[{"modelId":"fast","name":"Fast"},` +
					`{"modelId":"deep","name":"Deep","description":"slower"}],"currentModelId":"fast"}}`)
				break
			}
			reply(`{"sessionId":"raw-1"}`)
		case "session/set_model":
			if !legacyModels || (m.Params.ModelID != "fast" && m.Params.ModelID != "deep") {
				out.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32602,"message":"Invalid params"}}` + "\n"))
				break
			}
			reply(`{}`)
		case "session/prompt":
			chunk := func(text string) []byte {
				return []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + m.Params.SessionID +
					`","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + text + `"}}}}` + "\n")
			}
			burst := bytes.Repeat(chunk("x"), agentscript.FloodChunks)
			if bigMiB > 0 {
				burst = chunk(strings.Repeat("b", bigMiB<<20))
			}
			burst = append(burst, []byte(`{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"stopReason":"end_turn"}}`+"\n")...)
			out.Write(burst)
		default:
			out.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"Method not found"}}` + "\n"))
		}
	}
	return 0
}
