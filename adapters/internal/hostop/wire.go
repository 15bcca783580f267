package hostop

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// Protocol names this build's protocol; the two ends must agree.
const Protocol = "wharf-hostop/1"

// maxFrame bounds one frame's body, either way.
const maxFrame = 4 << 20

// MaxEntries bounds the entries of a directory ReadDir sends: more is
// refused (TooLarge) rather than listed in part.
const MaxEntries = 20000

// errFrameTooLarge ends a stream whose peer sent a frame over maxFrame.
var errFrameTooLarge = errors.New("hostop: frame over the bound")

// readFrame reads one frame's body.
func readFrame(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > maxFrame {
		return nil, errFrameTooLarge
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b, nil
}

// writeFrame writes v as one frame; the caller serializes writes.
func writeFrame(w io.Writer, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(body) > maxFrame {
		return errFrameTooLarge
	}
	buf := make([]byte, 4+len(body))
	binary.BigEndian.PutUint32(buf, uint32(len(body)))
	copy(buf[4:], body)
	_, err = w.Write(buf)
	return err
}

// hello is the first frame of each end.
type hello struct {
	Protocol string `json:"protocol"`
}

// The operations.
const (
	opLstat        = "lstat"
	opReadDir      = "readDir"
	opMkdir        = "mkdir"
	opRename       = "rename"
	opRemoveEmpty  = "removeEmpty"
	opEvalSymlinks = "evalSymlinks"
	opHome         = "home"
	opInspect      = "inspect"
	opInit         = "init"
)

type request struct {
	ID   uint64 `json:"id"`
	Op   string `json:"op"`
	Path string `json:"path,omitempty"`
	To   string `json:"to,omitempty"`
	// Args are a worktree operation's arguments (worktree.go).
	Args json.RawMessage `json:"args,omitempty"`
}

type response struct {
	ID      uint64     `json:"id"`
	Err     *wireError `json:"err,omitempty"`
	Info    *wireInfo  `json:"info,omitempty"`
	Entries []wireInfo `json:"entries,omitempty"`
	Path    string     `json:"path,omitempty"`
	Repo    *wireRepo  `json:"repo,omitempty"`
	// Result is a worktree operation's result (worktree.go).
	Result json.RawMessage `json:"result,omitempty"`
}

type wireInfo struct {
	Name    string `json:"name"`
	Size    int64  `json:"size"`
	Mode    uint32 `json:"mode"`
	ModTime int64  `json:"modTime"` // Unix nanoseconds
}

type wireRepo struct {
	TopLevel  string `json:"topLevel"`
	CommonDir string `json:"commonDir"`
	Branch    string `json:"branch"`
}

// wireError carries an error's meaning: the sentinel it satisfies (Code),
// a hub.Error's kind and public message, and its text for logs.
type wireError struct {
	Code    string `json:"code,omitempty"`
	Hub     bool   `json:"hub,omitempty"` // a hub.Error: Kind and Message are its own
	Kind    int    `json:"kind,omitempty"`
	Message string `json:"message,omitempty"`
	Text    string `json:"text"`
	// Made is a *hub.WorktreeAddError's; FetchAuth a *hub.FetchError's
	// Authentication.
	Made      string `json:"made,omitempty"`
	FetchAuth *bool  `json:"fetchAuth,omitempty"`
}

// The sentinels by code.
var sentinels = []struct {
	code string
	err  error
}{
	{"notExist", fs.ErrNotExist}, {"exist", fs.ErrExist}, {"permission", fs.ErrPermission},
	{"notEmpty", hub.ErrNotEmpty}, {"notDir", hub.ErrNotDir}, {"noRepository", hub.ErrNoRepository},
}

func toWire(err error) *wireError {
	if err == nil {
		return nil
	}
	w := &wireError{Text: err.Error()}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			w.Code = s.code
			break
		}
	}
	var he *hub.Error
	if errors.As(err, &he) {
		w.Hub, w.Kind, w.Message = true, int(he.Kind), he.Message
	}
	var ae *hub.WorktreeAddError
	if errors.As(err, &ae) {
		w.Made = ae.Made
	}
	var fe *hub.FetchError
	if errors.As(err, &fe) {
		w.FetchAuth = &fe.Authentication
	}
	return w
}

// remoteError is an error that crossed the wire.
type remoteError struct {
	w        wireError
	sentinel error
}

func (e *remoteError) Error() string { return e.w.Text }
func (e *remoteError) Unwrap() error { return e.sentinel }

func fromWire(w *wireError) error {
	if w == nil {
		return nil
	}
	e := &remoteError{w: *w}
	for _, s := range sentinels {
		if s.code == w.Code {
			e.sentinel = s.err
		}
	}
	var err error = e
	switch {
	case w.Made != "":
		err = &hub.WorktreeAddError{Made: w.Made, Err: e}
	case w.FetchAuth != nil:
		err = &hub.FetchError{Authentication: *w.FetchAuth, Err: e}
	}
	if w.Hub {
		return hub.Wrap(hub.Kind(w.Kind), err, w.Message)
	}
	return err
}

func toInfo(fi fs.FileInfo) wireInfo {
	return wireInfo{Name: fi.Name(), Size: fi.Size(), Mode: uint32(fi.Mode()), ModTime: fi.ModTime().UnixNano()}
}

// fileInfo is a wireInfo as an fs.FileInfo and an fs.DirEntry.
type fileInfo struct{ w wireInfo }

func (f fileInfo) Name() string               { return f.w.Name }
func (f fileInfo) Size() int64                { return f.w.Size }
func (f fileInfo) Mode() fs.FileMode          { return fs.FileMode(f.w.Mode) }
func (f fileInfo) ModTime() time.Time         { return time.Unix(0, f.w.ModTime) }
func (f fileInfo) IsDir() bool                { return f.Mode().IsDir() }
func (f fileInfo) Sys() any                   { return nil }
func (f fileInfo) Type() fs.FileMode          { return f.Mode().Type() }
func (f fileInfo) Info() (fs.FileInfo, error) { return f, nil }
func (f fileInfo) String() string             { return fmt.Sprintf("%s %v", f.w.Name, f.Mode()) }

// readHello reads the first frame as a hello.
func readHello(r io.Reader, h *hello) error {
	b, err := readFrame(r)
	if err != nil {
		return err
	}
	if err := decodeStrict(b, h); err != nil {
		return fmt.Errorf("hostop: a malformed hello: %w", err)
	}
	return nil
}

// decodeStrict decodes one JSON value, refusing unknown fields and
// anything after it.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}
