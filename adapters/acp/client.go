package acp

import (
	"context"

	acpsdk "github.com/coder/acp-go-sdk"
)

// client is the SDK's acp.Client of a connection: the requests the SDK
// still dispatches (files and terminals). Updates, permission requests
// and questions never reach it (the wire takes them), so those methods
// only refuse.
type client struct{ c *conn }

var _ acpsdk.Client = (*client)(nil)

func (cl *client) ReadTextFile(ctx context.Context, p acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	content, err := cl.c.readFile(p.Path, p.Line, p.Limit)
	if err != nil {
		return acpsdk.ReadTextFileResponse{}, err
	}
	return acpsdk.ReadTextFileResponse{Content: content}, nil
}

func (cl *client) WriteTextFile(ctx context.Context, p acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	return acpsdk.WriteTextFileResponse{}, cl.c.writeFile(p.Path, p.Content)
}

func (cl *client) RequestPermission(context.Context, acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	return acpsdk.RequestPermissionResponse{}, acpsdk.NewInternalError(map[string]any{"error": "handled by the wire"})
}

func (cl *client) SessionUpdate(context.Context, acpsdk.SessionNotification) error { return nil }

func (cl *client) CreateTerminal(ctx context.Context, p acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error) {
	id, err := cl.c.terms.create(p)
	if err != nil {
		return acpsdk.CreateTerminalResponse{}, err
	}
	return acpsdk.CreateTerminalResponse{TerminalId: id}, nil
}

func (cl *client) KillTerminal(ctx context.Context, p acpsdk.KillTerminalRequest) (acpsdk.KillTerminalResponse, error) {
	return acpsdk.KillTerminalResponse{}, cl.c.terms.kill(p.TerminalId)
}

func (cl *client) TerminalOutput(ctx context.Context, p acpsdk.TerminalOutputRequest) (acpsdk.TerminalOutputResponse, error) {
	return cl.c.terms.output(p.TerminalId)
}

func (cl *client) ReleaseTerminal(ctx context.Context, p acpsdk.ReleaseTerminalRequest) (acpsdk.ReleaseTerminalResponse, error) {
	return acpsdk.ReleaseTerminalResponse{}, cl.c.terms.release(p.TerminalId)
}

func (cl *client) WaitForTerminalExit(ctx context.Context, p acpsdk.WaitForTerminalExitRequest) (acpsdk.WaitForTerminalExitResponse, error) {
	return cl.c.terms.wait(ctx, p.TerminalId)
}
