package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
	"github.com/wharfhub/wharf/adapters/internal/hostop"
	"github.com/wharfhub/wharf/adapters/sshhost"
	"github.com/wharfhub/wharf/hub"
)

// hostConnector reaches the configured hosts: each is the ssh backend of
// adapters/sshhost for its sessions, with the remote operations of
// adapters/internal/hostop over that backend's connection for its folders
// and git (`wharf hostop` run there by the copied binary).
type hostConnector struct {
	runtimeDir string   // the hosts' masters and forwarded sockets
	ssh        []string // the ssh command; nil: "ssh"
	agents     map[string][]string
	log        *slog.Logger
}

// Connect builds h's place; nothing is reached until it is used.
func (c *hostConnector) Connect(h hub.Host) (hub.HostPlace, error) {
	sh, err := sshhost.New(sshhost.Options{Name: h.Name, Destination: h.Destination, RuntimeDir: c.runtimeDir, SSH: c.ssh,
		AgentCommands: c.agents, Logger: c.log})
	if err != nil {
		return nil, err
	}
	ops := hostop.NewClient(hostop.Options{Logger: c.log.With("host", h.Name),
		Dial: func(ctx context.Context) (io.ReadWriteCloser, error) { return sh.Exec(ctx, "hostop") },
		Lend: func(ctx context.Context, creds hub.SessionCredentials, args ...string) (hostop.LentStream, gitcmd.Lent, error) {
			l, lent, err := sh.Lend(ctx, creds, args...)
			if err != nil {
				return nil, lent, err // not a nil *sshhost.Lent in an interface
			}
			return l, lent, nil
		}})
	return &hostPlace{Host: sh, ops: ops}, nil
}

// hostPlace is one host's hub.HostPlace.
type hostPlace struct {
	*sshhost.Host
	ops *hostop.Client
}

func (p *hostPlace) FS() hub.FS         { return p.ops }
func (p *hostPlace) Git() hub.GitRunner { return p.ops }

// Close ends the remote operations' stream, then the host's connection.
func (p *hostPlace) Close() error {
	return errors.Join(p.ops.Close(), p.Host.Close())
}

// hostsRuntimeDir is where the hosts' masters and sockets live: the
// state directory's "hosts" folder for the daemon; a folder of its own
// for an administration command beside it (`wharf host add`), so that
// the command's connections never close the daemon's. remove, when not
// nil, removes that folder at Close.
func hostsRuntimeDir(base string, admin bool) (dir string, remove func(), err error) {
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", nil, fmt.Errorf("hosts runtime directory: %w", err)
	}
	if !admin {
		return base, nil, nil
	}
	dir = filepath.Join(base, fmt.Sprintf("admin-%d", os.Getpid()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, fmt.Errorf("hosts runtime directory: %w", err)
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}
