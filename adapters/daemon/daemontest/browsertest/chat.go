package browsertest

import (
	"context"
	"net/url"
)

// The chat API (tag `chat`) as another device uses it beside the
// browser: the tests act through it where a second person would, and
// check what the page shows against what the API says.

// ChatPath is the path of a chat API operation of workspace ws, rest
// relative to /s/{ws}/api/chat/ with its segments already escaped.
func ChatPath(ws, rest string) string {
	return "/s/" + url.PathEscape(ws) + "/api/chat/" + rest
}

// ConversationPath is the path of conversation cid, plus rest ("/messages", say).
func ConversationPath(ws, cid, rest string) string {
	return ChatPath(ws, "conversations/"+url.PathEscape(cid)+rest)
}

// Conversation is a snapshot (ConversationSnapshot) as the tests read it.
type Conversation struct {
	Conversation struct {
		ID, Title, Status string
	} `json:"conversation"`
	Items  []map[string]any `json:"items"`
	Queued []struct {
		ID, Text string
	} `json:"queued"`
	Cursor string `json:"cursor"`
}

// CreateConversation starts a conversation of workspace ws with agent
// and returns its id.
func (c *Client) CreateConversation(ctx context.Context, ws, agent, title string) (string, error) {
	body := map[string]string{"agent": agent}
	if title != "" {
		body["title"] = title
	}
	var res struct {
		Conversation struct{ ID string } `json:"conversation"`
	}
	err := c.Do(ctx, "POST", ChatPath(ws, "conversations"), body, &res)
	return res.Conversation.ID, err
}

// Send sends text to conversation cid and reports whether it was held.
func (c *Client) Send(ctx context.Context, ws, cid, text string) (held bool, err error) {
	var res struct{ Held bool }
	err = c.Do(ctx, "POST", ConversationPath(ws, cid, "/messages"), map[string]string{"text": text}, &res)
	return res.Held, err
}

// Snapshot reads conversation cid as it stands.
func (c *Client) Snapshot(ctx context.Context, ws, cid string) (*Conversation, error) {
	var s Conversation
	err := c.Do(ctx, "GET", ConversationPath(ws, cid, ""), nil, &s)
	return &s, err
}
