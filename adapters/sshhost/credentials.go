package sshhost

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/wharfhub/wharf/adapters/internal/credenv"
	"github.com/wharfhub/wharf/hub"
)

// A remote session's credentials stay on the Hub. The projection
// (adapters/internal/credenv) is built in the Hub's private runtime
// folder as for a local session — its agent and credential sockets are
// served there — and mirrored into the session's private (0700) runtime
// folder on the host:
//
//   - its files (generated git and ssh configs, public keys, scripts),
//     which hold paths and public halves only, are copied with every
//     Hub-side path rewritten to the remote folder (a tar the start
//     script reads from the channel);
//   - its sockets are forwarded back to the Hub's (`ssh -O forward -R`),
//     so a signature, a token or an agent operation is asked of the Hub
//     one request at a time, and ends when the forward is cancelled at
//     the session's end;
//   - its variables, which may hold a CLI's token, reach the child's
//     environment over the ssh channel (the start script reads them from
//     stdin before it starts the child), never a command line or a file.
//
// The residual risk is OpenSSH's own for any forwarded agent: someone who
// can bypass file permissions on the host can use, but never extract, the
// keys lent to the session while it runs.

// projection is a session's credentials on both ends.
type projection struct {
	hub    *credenv.Projection
	remote string   // the folder on the host
	env    []string // NAME=value lines for the child, remote paths
	files  []byte   // a tar of the folder's files, remote paths
	socks  []string // socket names in the folder, forwarded back
	// rewrite turns a path of the Hub's folder into the host's.
	rewrite func(string) string
}

// project builds the projection of c for the session (or lent process)
// name, whose remote folder is remote and whose binary on the host is
// bin; noUserConfig leaves the user's git config out (a clone's).
func (h *Host) project(ctx context.Context, c hub.SessionCredentials, name, remote, bin string, noUserConfig bool) (*projection, error) {
	dir := filepath.Join(h.opts.RuntimeDir, name)
	p, err := credenv.Build(ctx, credenv.Options{Dir: dir, Credentials: c, Command: []string{bin},
		Base: h.opts.Env, NoUserConfig: noUserConfig, Log: h.log.With("session", name)})
	if err != nil {
		return nil, err
	}
	rewrite := func(s string) string { return strings.ReplaceAll(s, dir, remote) }
	pr := &projection{hub: p, remote: remote, rewrite: rewrite}
	for _, kv := range p.Apply(nil) {
		if strings.ContainsAny(kv, "\n\x00") {
			p.Close()
			return nil, fmt.Errorf("a session variable holds a line break")
		}
		// Apply(nil) gives PATH as the projection's folder alone: the
		// host's PATH follows it there (the start script's PATH+=).
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			kv = "PATH+=" + v
		}
		pr.env = append(pr.env, rewrite(kv))
	}
	if pr.files, pr.socks, err = folderTar(dir, rewrite); err != nil {
		p.Close()
		return nil, err
	}
	return pr, nil
}

// forwards are the -R arguments of the projection's sockets.
func (pr *projection) forwards() []string {
	var args []string
	for _, s := range pr.socks {
		args = append(args, "-R", path.Join(pr.remote, s)+":"+filepath.Join(pr.hub.Dir(), s))
	}
	return args
}

// folderTar is a tar of dir's folders and regular files, each file's
// text passed through rewrite, and the names of its sockets.
func folderTar(dir string, rewrite func(string) string) ([]byte, []string, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	var socks []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSocket != 0:
			socks = append(socks, filepath.ToSlash(rel))
			return nil
		case fi.IsDir():
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: filepath.ToSlash(rel) + "/", Mode: 0o700})
		case !fi.Mode().IsRegular():
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		data = []byte(rewrite(string(data)))
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: filepath.ToSlash(rel),
			Mode: int64(fi.Mode().Perm() & 0o700), Size: int64(len(data))}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	return buf.Bytes(), socks, err
}

// preamble is what the start script reads from stdin before it starts
// the child: the variables, one NAME=value a line, then an empty line,
// then the size of the folder's tar on a line, and the tar.
func (pr *projection) preamble() []byte {
	var b bytes.Buffer
	for _, kv := range pr.env {
		b.WriteString(kv)
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "\n%d\n", len(pr.files))
	b.Write(pr.files)
	return b.Bytes()
}
