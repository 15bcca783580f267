package main

import (
	"encoding/json"
	"testing"

	"github.com/matryer/is"
)

func TestFormatEnvelope(t *testing.T) {
	tests := []struct {
		name, envelope, want string
	}{
		{
			name:     "document snapshot",
			envelope: `{"ws":"p","topic":"document","key":"scope=folder","cursor":"e.1","event":{"kind":"data","data":{"kind":"snapshot","epoch":"w1","revision":3}}}`,
			want:     `live ws="p" topic=document key="scope=folder" kind=data cursor="e.1" update="snapshot" epoch="w1" revision=3`,
		},
		{
			name:     "document patch",
			envelope: `{"ws":"p","topic":"document","key":"","cursor":"e.2","event":{"kind":"data","data":{"kind":"patch","epoch":"w1","previousRevision":3,"revision":5}}}`,
			want:     `live ws="p" topic=document key="" kind=data cursor="e.2" update="patch" epoch="w1" revision=5 previousRevision=3`,
		},
		{
			name:     "document without key",
			envelope: `{"ws":"p","topic":"document","cursor":"e.2","event":{"kind":"ready"}}`,
			want:     `live ws="p" topic=document kind=ready cursor="e.2"`,
		},
		{
			name:     "activity",
			envelope: `{"ws":"q","topic":"activity","cursor":"f.1","event":{"kind":"data","data":{"running":true,"working":true,"awaiting":false,"finished":false}}}`,
			want:     `live ws="q" topic=activity kind=data cursor="f.1" running=true working=true awaiting=false finished=false`,
		},
		{
			name:     "conversation resync",
			envelope: `{"ws":"p","topic":"conversation","key":"a:1","cursor":"","event":{"kind":"resync","data":{"type":"x"}}}`,
			want:     `live ws="p" topic=conversation key="a:1" kind=resync cursor=""`,
		},
		{
			name:     "worktrees",
			envelope: `{"ws":"p","topic":"worktrees","cursor":"","event":{"kind":"data","data":{"type":"worktree.inventory"}}}`,
			want:     `live ws="p" topic=worktrees kind=data cursor=""`,
		},
		{
			name:     "unreadable activity",
			envelope: `{"ws":"p","topic":"activity","cursor":"f.2","event":{"kind":"data","data":[]}}`,
			want:     `live ws="p" topic=activity kind=data cursor="f.2" activity=unreadable`,
		},
		{
			name:     "control characters are quoted",
			envelope: `{"ws":"p\u001b[2J","topic":"inventory","cursor":"i.1","event":{"kind":"unavailable"}}`,
			want:     `live ws="p\x1b[2J" topic=inventory kind=unavailable cursor="i.1"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			var env liveEnvelope
			is.NoErr(json.Unmarshal([]byte(tt.envelope), &env)) // a valid envelope
			is.Equal(formatEnvelope(env), tt.want)              // one line, as expected
		})
	}
}
