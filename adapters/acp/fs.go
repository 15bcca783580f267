package acp

import (
	"errors"
	"io/fs"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/wharfhub/wharf/adapters/internal/confine"
)

// maxFileBytes bounds a file the agent reads or writes through the
// client.
const maxFileBytes = 16 << 20

// boundary is the workspace folder of the connection and the boundary
// around it (adapters/internal/confine): the only way fs/* and a
// terminal's working folder reach the disk.
func (c *conn) boundary() *confine.Root { return confine.New(c.dir) }

// refusal is the JSON-RPC error the agent gets for a path the boundary
// refused: invalid params with a plain message naming no host path, or an
// internal error for a failure of the disk.
func refusal(err error, what string) error {
	msg := ""
	switch {
	case errors.Is(err, confine.ErrNotAbsolute):
		msg = "the path must be absolute"
	case errors.Is(err, confine.ErrOutside):
		msg = "the path is outside the workspace folder"
	case errors.Is(err, confine.ErrSymlink):
		msg = "the path ends in a symbolic link (or loops through links): Wharf never follows the last link of a path; use the path of the file it points to"
	case errors.Is(err, confine.ErrHardLink):
		msg = "the file has more than one hard link, and another may be outside the workspace folder: Wharf neither reads nor writes it"
	case errors.Is(err, confine.ErrNotRegular):
		msg = "the path is not a regular file"
	case errors.Is(err, confine.ErrNotDir):
		msg = "a part of the path is not a folder"
	case errors.Is(err, confine.ErrTooLarge):
		msg = "the file is larger than 16 MiB"
	case errors.Is(err, confine.ErrTooLong):
		msg = "the path is too long"
	case errors.Is(err, confine.ErrRaced):
		msg = "the folder kept changing while the path was opened; try again"
	case errors.Is(err, fs.ErrNotExist):
		msg = "no such file or folder"
	case errors.Is(err, fs.ErrPermission):
		msg = "permission denied"
	default:
		return acpsdk.NewInternalError(map[string]any{"error": what})
	}
	return acpsdk.NewInvalidParams(map[string]any{"error": msg})
}

// readFile reads a text file of the workspace, from line (1-based) for
// limit lines when given.
func (c *conn) readFile(path string, line, limit *int) (string, error) {
	root := c.boundary()
	rel, err := root.Rel(path)
	if err != nil {
		return "", refusal(err, "the path could not be used")
	}
	b, err := root.ReadFile(rel, maxFileBytes)
	if err != nil {
		return "", refusal(err, "the file could not be read")
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
// folders) when missing; the old content or the new, never a mix.
func (c *conn) writeFile(path, content string) error {
	if len(content) > maxFileBytes {
		return acpsdk.NewInvalidParams(map[string]any{"error": "the content is larger than 16 MiB"})
	}
	root := c.boundary()
	rel, err := root.Rel(path)
	if err != nil {
		return refusal(err, "the path could not be used")
	}
	if err := root.WriteFile(rel, []byte(content)); err != nil {
		return refusal(err, "the file could not be written")
	}
	return nil
}
