package jsonkeys_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/jsonkeys"
)

type inner struct {
	Host string `json:"host"`
}

type outer struct {
	Name  string          `json:"name"`
	Items []inner         `json:"items"`
	Raw   json.RawMessage `json:"raw"`
	Skip  string          `json:"-"`
	inner
}

func TestCheck(t *testing.T) {
	typ := reflect.TypeFor[*outer]()
	for _, tc := range []struct{ name, body, err string }{
		{"exact names", `{"name":"a","items":[{"host":"h"}],"raw":{"Any":1},"host":"e"}`, ""},
		{"another case", `{"Name":"a"}`, `request contains an unknown field: "Name"`},
		{"nested case", `{"items":[{"Host":"h"}]}`, `request contains an unknown field: "Host"`},
		{"twice", `{"name":"a","name":"b"}`, `request contains a duplicate field: "name"`},
		{"twice inside raw", `{"raw":{"k":1,"k":2}}`, `request contains a duplicate field: "k"`},
		{"ignored field", `{"Skip":"x"}`, `request contains an unknown field: "Skip"`},
		{"too deep", strings.Repeat(`{"raw":`, 40) + `1` + strings.Repeat(`}`, 40), "request nests too deeply"},
		{"not JSON", `{"name":`, "invalid JSON body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			err := jsonkeys.Check([]byte(tc.body), typ, "request")
			if tc.err == "" {
				is.NoErr(err) // accepted
				return
			}
			is.True(err != nil)           // refused
			is.Equal(err.Error(), tc.err) // saying why
		})
	}
}
