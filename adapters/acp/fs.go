package acp

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// maxFileBytes bounds a file the agent reads or writes through the
// client.
const maxFileBytes = 16 << 20

// errOutside refuses a path outside the workspace folder.
var errOutside = acpsdk.NewInvalidParams(map[string]any{"error": "the path is outside the workspace folder"})

// confine resolves path, which must be absolute, and refuses it unless it
// lies inside the workspace folder once every symbolic link of its
// existing part is resolved: a link inside the folder pointing out of it
// does not open a way out.
func (c *conn) confine(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", acpsdk.NewInvalidParams(map[string]any{"error": "the path must be absolute"})
	}
	root, err := filepath.EvalSymlinks(c.dir)
	if err != nil {
		return "", acpsdk.NewInternalError(map[string]any{"error": "the workspace folder is unreachable"})
	}
	clean := filepath.Clean(path)
	// Resolve the longest existing prefix; what does not exist yet cannot
	// be a link.
	rest := ""
	resolved := clean
	for {
		r, err := filepath.EvalSymlinks(resolved)
		if err == nil {
			resolved = filepath.Join(r, rest)
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", errOutside
		}
		parent := filepath.Dir(resolved)
		if parent == resolved {
			return "", errOutside
		}
		rest = filepath.Join(filepath.Base(resolved), rest)
		resolved = parent
	}
	if resolved != root && !strings.HasPrefix(resolved, root+string(filepath.Separator)) {
		return "", errOutside
	}
	return resolved, nil
}

// readFile reads a text file of the workspace, from line (1-based) for
// limit lines when given.
func (c *conn) readFile(path string, line, limit *int) (string, error) {
	p, err := c.confine(path)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return "", acpsdk.NewInvalidParams(map[string]any{"error": "no such file"})
	case fi.Size() > maxFileBytes:
		return "", acpsdk.NewInvalidParams(map[string]any{"error": "the file is too large"})
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", acpsdk.NewInternalError(map[string]any{"error": "the file could not be read"})
	}
	s := string(b)
	if line == nil && limit == nil {
		return s, nil
	}
	lines := strings.SplitAfter(s, "\n")
	from := 0
	if line != nil && *line > 1 {
		from = min(*line-1, len(lines))
	}
	to := len(lines)
	if limit != nil && *limit >= 0 {
		to = min(from+*limit, len(lines))
	}
	return strings.Join(lines[from:to], ""), nil
}

// writeFile writes a text file of the workspace, creating it (and its
// folders) when missing.
func (c *conn) writeFile(path, content string) error {
	if len(content) > maxFileBytes {
		return acpsdk.NewInvalidParams(map[string]any{"error": "the content is too large"})
	}
	p, err := c.confine(path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return acpsdk.NewInternalError(map[string]any{"error": "the folder could not be made"})
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		return acpsdk.NewInternalError(map[string]any{"error": "the file could not be written"})
	}
	return nil
}
