package chat

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The bounds of what an agent's output holds in the child. An agent is
// untrusted: it may stream an endless answer or a flood of tool calls,
// each as large as a line of the protocol (64 MiB). Every item is bounded
// when it is made or changed, and every conversation as a whole; what is
// cut is said in a notice item, so a client knows it sees less than the
// agent sent. Sizes count the text an item holds (every string an agent
// fills) plus itemOverhead per item.
const (
	// MaxMessageItemBytes bounds the text of one streamed message (an
	// answer, its reasoning, a user message of a replayed history); the
	// rest of such an item is bounded by MaxItemBytes. 16 MiB is 4
	// million tokens, past any model's output; the benchmarks stream
	// answers of 16 MiB whole.
	MaxMessageItemBytes = 16 << 20
	// MaxItemBytes bounds every other item: a tool call's output, diffs
	// and input, a plan, a question, a notice. Agents cut tool output far
	// below (Claude Code keeps 30,000 characters); 1 MiB is more than a
	// person reads in a browser, and 128 tool calls at the bound are
	// trimmed by the conversation's bound.
	MaxItemBytes = 1 << 20
	// MaxConversationBytes bounds one conversation's items together.
	// Past it the oldest items are trimmed (each keeps TrimmedItemBytes,
	// marked `trimmed`), then, if that is not enough, removed, down to
	// three quarters of the bound so that trimming is rare. 64 MiB is
	// four answers at their bound, or thousands of ordinary items.
	MaxConversationBytes = 64 << 20
	// TrimmedItemBytes is what a trimmed item keeps of its text: enough to
	// say what it was.
	TrimmedItemBytes = 2 << 10
	// maxAgentIDBytes bounds an id an agent gives (tool call, message,
	// compaction): a longer one is replaced by its digest, the same for
	// every update naming it.
	maxAgentIDBytes = 256
	// itemOverhead is what an item costs beside its text (its struct, its
	// entries in the item list and index), so that a flood of tiny items
	// is bounded too: 64 MiB holds at most 262,144 items.
	itemOverhead = 256
)

// Bounds are the bounds a Manager keeps agents' output within (see the
// constants); a zero field takes its constant. Tests and embedders with
// other means may choose smaller ones.
type Bounds struct {
	MessageItemBytes  int // MaxMessageItemBytes
	ItemBytes         int // MaxItemBytes
	ConversationBytes int // MaxConversationBytes
}

// withDefaults fills the zero fields of b with the constants.
func (b Bounds) withDefaults() Bounds {
	if b.MessageItemBytes <= 0 {
		b.MessageItemBytes = MaxMessageItemBytes
	}
	if b.ItemBytes <= 0 {
		b.ItemBytes = MaxItemBytes
	}
	if b.ConversationBytes <= 0 {
		b.ConversationBytes = MaxConversationBytes
	}
	return b
}

// agentID returns id as an item id may hold it: as it is, or its digest
// when it is longer than maxAgentIDBytes.
func agentID(id string) string {
	if len(id) <= maxAgentIDBytes {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256-" + hex.EncodeToString(sum[:])
}

// limit is the bound of item it: a message's text and the rest of it,
// or any other item.
func (m *Manager) limit(it *Item) int {
	if isMessage(it) {
		return m.bounds.MessageItemBytes + m.bounds.ItemBytes
	}
	return m.bounds.ItemBytes
}

// isMessage reports whether it is a streamed message.
func isMessage(it *Item) bool {
	switch it.Kind {
	case KindAssistantMessage, KindReasoning, KindUserMessage:
		return true
	}
	return false
}

// size is what it holds, as the bounds count it.
func (it *Item) size() int {
	n := itemOverhead + len(it.ID) + len(it.Text) + len(it.MessageID) + len(it.Title) + len(it.ToolKind) +
		len(it.Command) + len(it.Input) + len(it.SourceToolID) + len(it.Intro) + len(it.Schema) + len(it.Link) +
		len(it.Message) + len(it.Code) + len(it.Summary) + len(it.Label)
	if it.Markdown != nil {
		n += len(*it.Markdown)
	}
	for _, a := range it.Attachments {
		n += 16 + len(a.MimeType) + len(a.Name)
	}
	for _, c := range it.Content {
		n += c.size()
	}
	if it.Diff != nil {
		n += it.Diff.size()
	}
	for _, l := range it.Locations {
		n += 16 + len(l)
	}
	for _, c := range it.Choices {
		n += 16 + len(c.ID) + len(c.Label) + len(c.Kind)
	}
	for _, e := range it.Entries {
		n += 16 + len(e.Content) + len(e.Priority) + len(e.Status)
	}
	return n
}

func (c ToolContent) size() int {
	n := 16 + len(c.Type) + len(c.Text) + len(c.Path) + len(c.TerminalID)
	if c.OldText != nil {
		n += len(*c.OldText)
	}
	if c.NewText != nil {
		n += len(*c.NewText)
	}
	return n
}

// budget cuts an item's fields to what is left of its bound, counting
// what it cut. Cut strings are copied, so the agent's larger string is
// freed.
type budget struct{ left, cut int }

// str keeps what fits of *s, whole characters only.
func (b *budget) str(s *string) {
	if len(*s) > b.left {
		keep := utf8Prefix(*s, b.left)
		b.cut += len(*s) - len(keep)
		*s = strings.Clone(keep)
	}
	b.left -= len(*s)
}

// whole keeps a value of n bytes that cannot be cut (JSON, a diff) when
// it fits, and reports whether it does.
func (b *budget) whole(n int) bool {
	if n > b.left {
		b.cut += n
		return false
	}
	b.left -= n
	return true
}

// item cuts it to the budget, keeping first what a person reads to know
// what the item is (its title, command and message), then its lists, its
// input, then its output.
func (b *budget) item(it *Item) {
	b.left -= itemOverhead + len(it.ID) + len(it.MessageID) + len(it.ToolKind) + len(it.SourceToolID) + len(it.Code)
	for _, s := range []*string{&it.Title, &it.Command, &it.Label, &it.Message, &it.Intro, &it.Link} {
		b.str(s)
	}
	it.Locations = keepWhile(b, it.Locations, func(l string) int { return 16 + len(l) })
	it.Choices = keepWhile(b, it.Choices, func(c Choice) int { return 16 + len(c.ID) + len(c.Label) + len(c.Kind) })
	it.Entries = keepWhile(b, it.Entries, func(e PlanEntry) int { return 16 + len(e.Content) + len(e.Priority) + len(e.Status) })
	it.Attachments = keepWhile(b, it.Attachments, func(a AttachmentInfo) int { return 16 + len(a.MimeType) + len(a.Name) })
	if !b.whole(len(it.Input)) {
		it.Input = nil
	}
	if !b.whole(len(it.Schema)) {
		it.Schema = nil
	}
	if it.Diff != nil && !b.whole(it.Diff.size()) {
		it.Diff = nil
	}
	var content []ToolContent
	for _, c := range it.Content {
		if c.Type == "text" {
			b.left -= 16 + len(c.Type)
			if b.left <= 0 {
				b.cut += len(c.Text)
				continue
			}
			b.str(&c.Text)
			content = append(content, c)
		} else if b.whole(c.size()) {
			content = append(content, c)
		}
	}
	if it.Content != nil {
		it.Content = content
	}
	b.str(&it.Summary)
	b.str(&it.Text)
	if it.Markdown != nil {
		md := *it.Markdown
		b.str(&md)
		it.Markdown = &md
	}
}

// keepWhile keeps the first elements of xs that fit the budget.
func keepWhile[T any](b *budget, xs []T, size func(T) int) []T {
	for i, x := range xs {
		if !b.whole(size(x)) {
			for _, y := range xs[i+1:] {
				b.cut += size(y)
			}
			return xs[:i:i]
		}
	}
	return xs
}

// utf8Prefix is the longest prefix of s of at most n bytes that ends on
// a character boundary.
func utf8Prefix(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// account bounds it, cutting it past its limit, and counts it in its
// conversation; it returns how many bytes it cut. Every change of an
// item passes here (upsert). m.mu held.
func (m *Manager) account(c *conversation, it *Item) (cut int) {
	size := it.size()
	if bound := m.limit(it); size > bound {
		b := budget{left: bound}
		b.item(it)
		size, cut = it.size(), b.cut
	}
	c.bytes += size - it.counted
	it.counted = size
	return cut
}

// grew counts n bytes appended to it (a streamed message) in its
// conversation. m.mu held.
func (m *Manager) grew(c *conversation, it *Item, n int) {
	it.counted += n
	c.bytes += n
}

// cutNotice says that it was cut by n bytes: a notice item, one per cut
// item, restated with the latest figure. m.mu held.
func (m *Manager) cutNotice(c *conversation, it *Item, n int) {
	if n <= 0 || it.Kind == KindNotice {
		return
	}
	if it.cutNotice == nil || c.byID[it.cutNotice.ID] != it.cutNotice {
		it.cutNotice = m.newItem(c, KindNotice, "")
		it.cutNotice.Level = "warning"
	}
	what, bound := "An item ("+it.Kind+")", m.limit(it)
	switch it.Kind {
	case KindTool, KindCommand:
		what = "The output of a tool call"
		if it.Title != "" {
			what = fmt.Sprintf("The output of %q", utf8Prefix(it.Title, 80))
		}
	case KindAssistantMessage:
		what, bound = "The agent's answer", m.bounds.MessageItemBytes
	case KindReasoning:
		what, bound = "The agent's reasoning", m.bounds.MessageItemBytes
	case KindUserMessage:
		what, bound = "A message of the conversation's history", m.bounds.MessageItemBytes
	}
	it.cutNotice.Message = fmt.Sprintf("%s was longer than %s; %s of it is not shown.", what, sizeText(bound), sizeText(n))
	m.upsert(c, it.cutNotice)
}

// sizeText writes n bytes for people.
func sizeText(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// trim keeps c within its bound (MaxConversationBytes): past it, the oldest items
// that nothing still grows or awaits are trimmed to TrimmedItemBytes
// (and marked so), then removed if that is not enough, until c holds
// three quarters of the bound; one notice says what went. m.mu held.
func (m *Manager) trim(c *conversation) {
	if c.bytes <= m.bounds.ConversationBytes || c.trimming {
		return
	}
	c.trimming = true // the notice below passes through upsert again
	defer func() { c.trimming = false }()
	target := m.bounds.ConversationBytes / 4 * 3
	before, shortened, removed := c.bytes, 0, 0
	for _, it := range c.items {
		if c.bytes <= target {
			break
		}
		if m.growing(c, it) || it.counted <= TrimmedItemBytes+itemOverhead+len(it.ID) {
			continue
		}
		b := budget{left: TrimmedItemBytes + itemOverhead + len(it.ID)}
		b.item(it)
		it.Trimmed = true
		size := it.size()
		c.bytes += size - it.counted
		it.counted = size
		m.emit(c, &Event{Type: EventItemUpsert, Item: it})
		shortened++
	}
	if c.bytes > target {
		kept := c.items[:0:0]
		for _, it := range c.items {
			if c.bytes > target && !m.growing(c, it) {
				delete(c.byID, it.ID)
				c.bytes -= it.counted
				m.emit(c, &Event{Type: EventItemRemove, ItemID: it.ID})
				removed++
				continue
			}
			kept = append(kept, it)
		}
		c.items = kept
	}
	if shortened == 0 && removed == 0 {
		return // what is left all grows or awaits: nothing to say
	}
	msg := fmt.Sprintf("Older output was dropped to keep this conversation within %s: %s of it is gone", sizeText(m.bounds.ConversationBytes),
		sizeText(before-c.bytes))
	switch {
	case shortened > 0 && removed > 0:
		msg += fmt.Sprintf(" (%d items shortened, %d removed).", shortened, removed)
	case removed > 0:
		msg += fmt.Sprintf(" (%d items removed).", removed)
	default:
		msg += fmt.Sprintf(" (%d items shortened).", shortened)
	}
	it := m.newItem(c, KindNotice, "")
	it.Level, it.Message = "warning", msg
	m.upsert(c, it)
}

// growing reports whether it may still change in a way trimming would
// break: the message being streamed, or a request awaiting an answer.
func (m *Manager) growing(c *conversation, it *Item) bool {
	if c.text != nil && c.text.item == it {
		return true
	}
	if it.Kind == KindPermission || it.Kind == KindQuestion {
		_, pending := c.pending[it.ID[strings.IndexByte(it.ID, ':')+1:]]
		return pending
	}
	return false
}
