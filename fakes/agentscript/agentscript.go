// Package agentscript names the scripts every test agent plays: the
// scripted ACP agent (fakes/acpagent, a real program speaking ACP over
// stdio), the burst writer it also contains, and the fake AgentRuntime's
// autoplay (fakes.AgentRuntime). A turn plays the script its prompt's
// first word names; the porttest suite of hub.AgentRuntime runs them all
// against both and checks the same updates arrive.
package agentscript

import "strings"

// The scripts, by the prompt word that plays them.
const (
	Stream     = "stream"     // Thought, then the answer in three chunks; end_turn with Usage
	Tool       = "tool"       // a tool call editing DiffPath, completed with a diff; end_turn
	Permission = "permission" // an execute tool call needing permission; Allowed or Denied after the answer
	Question   = "question"   // an elicitation asking for "name"; Greeting+name, or Declined
	Plan       = "plan"       // a plan of PlanSteps; end_turn
	Usage      = "usage"      // a usage_update (UsedTokens of WindowTokens, CostUSD); end_turn
	Compaction = "compaction" // compaction_update in_progress, then completed with Summary; end_turn
	Notice     = "notice"     // a notice update (warning NoticeText); end_turn
	Auth       = "auth"       // the prompt answered -32000, authentication required
	Crash      = "crash"      // a chunk of Partial, then the agent exits with status 3
	Cancel     = "cancel"     // a chunk of Working, then waits for session/cancel: cancelled
	Big        = "big"        // one chunk of BigBytes bytes (a 5 MiB line); end_turn
	Flood      = "flood"      // FloodChunks chunks of one "x" each, as fast as possible; end_turn
	Garbage    = "garbage"    // a line that is not JSON, then a chunk of AfterGarbage; end_turn
	Echo       = "echo"       // the prompt's text back, and "image <mime>" per image; end_turn
)

// What the scripts say.
const (
	Thought      = "thinking it over"
	DiffPath     = "notes.txt"
	DiffOld      = "old line\n"
	DiffNew      = "new line\n"
	ToolTitle    = "Edit notes.txt"
	CommandLine  = "rm -rf build"
	Allowed      = "allowed"
	Denied       = "denied"
	Greeting     = "hello "
	Declined     = "declined"
	NoticeText   = "rate limits are near"
	Summary      = "kept the decisions"
	Partial      = "partial answer"
	Working      = "working on it"
	AfterGarbage = "still here"
	UsedTokens   = 1200
	WindowTokens = 200000
	CostUSD      = 0.25
	BigBytes     = 5 << 20
	FloodChunks  = 10000
	InputTokens  = 10
	OutputTokens = 5
)

// Answer is the stream script's answer, in its three chunks.
var Answer = []string{"Hello", ", ", "world"}

// PlanSteps are the plan script's entries.
var PlanSteps = []string{"read the code", "write the fix"}

// Models and Modes are what every test agent offers; the first of each is
// current in a new session.
var (
	Models = [][2]string{{"fast", "Fast model"}, {"deep", "Deep model"}}
	Modes  = [][2]string{{"ask", "Ask"}, {"code", "Code"}}
)

// Of returns the script a prompt plays: its first word.
func Of(prompt string) string {
	word, _, _ := strings.Cut(strings.TrimSpace(prompt), " ")
	return word
}
