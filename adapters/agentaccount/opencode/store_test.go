package opencode

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/matryer/is"
)

// writeStore writes an auth.json under dir/opencode.
func writeStore(t *testing.T, dir, content string) {
	t.Helper()
	is := is.New(t)
	is.NoErr(os.MkdirAll(filepath.Join(dir, "opencode"), 0o700))                                // the data directory
	is.NoErr(os.WriteFile(filepath.Join(dir, "opencode", "auth.json"), []byte(content), 0o600)) // the store
}

func TestTheStoreIsFoundWhereOpenCodeFindsIt(t *testing.T) {
	home, data := t.TempDir(), t.TempDir()
	writeStore(t, filepath.Join(home, ".local", "share"), `{"a":{"type":"api","key":"k"}}`)
	writeStore(t, data, `{"b":{"type":"api","key":"k"}}`)
	tests := []struct {
		name string
		env  []string
		want []savedLogin
	}{
		{"XDG_DATA_HOME", []string{"HOME=" + home, "XDG_DATA_HOME=" + data}, []savedLogin{{"b", "api"}}},
		{"the XDG default under HOME", []string{"HOME=" + home}, []savedLogin{{"a", "api"}}},
		{"a relative XDG_DATA_HOME is ignored", []string{"HOME=" + home, "XDG_DATA_HOME=rel"}, []savedLogin{{"a", "api"}}},
		{"no home at all", nil, nil},
		{"a home without a store", []string{"HOME=" + t.TempDir()}, nil},
		{"the logins of OPENCODE_AUTH_CONTENT replace the file's", []string{"HOME=" + home, authContentVar + `={"c":{"type":"api","key":"k"}}`}, []savedLogin{{"c", "api"}}},
		{"an OPENCODE_AUTH_CONTENT that is no JSON leaves the file", []string{"HOME=" + home, authContentVar + "={"}, []savedLogin{{"a", "api"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			st, err := readStore(tt.env)
			is.NoErr(err)                // read
			is.Equal(st.Logins, tt.want) // the logins OpenCode uses
		})
	}
	t.Run("OPENCODE_AUTH_CONTENT as JSON that is no object", func(t *testing.T) {
		is := is.New(t)
		st, err := readStore([]string{"HOME=" + home, authContentVar + "=[1]"})
		is.NoErr(err)
		is.True(st.FromEnv)         // the variable rules
		is.Equal(len(st.Logins), 0) // with no login, as in OpenCode
	})
}

func TestAStoreThatIsNoRegularFileIsRefusedWithoutHanging(t *testing.T) {
	is := is.New(t)
	data := t.TempDir()
	is.NoErr(os.MkdirAll(filepath.Join(data, "opencode"), 0o700))
	is.NoErr(syscall.Mkfifo(filepath.Join(data, "opencode", "auth.json"), 0o600)) // a FIFO no one writes
	_, err := readStore([]string{"XDG_DATA_HOME=" + data})
	is.True(err != nil) // refused at once, not read forever
}

func TestAStoreThatIsNotJSONIsEmptyAsForOpenCode(t *testing.T) {
	is := is.New(t)
	data := t.TempDir()
	writeStore(t, data, `{"a":`)
	st, err := readStore([]string{"XDG_DATA_HOME=" + data})
	is.NoErr(err)               // no error
	is.Equal(len(st.Logins), 0) // and no login
}
