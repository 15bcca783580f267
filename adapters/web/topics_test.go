package web

import (
	"bytes"
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// topicsModule is the dashboard's one module that names the live topics.
const topicsModule = "static/topics.js"

var (
	topicConst = regexp.MustCompile(`(?m)^export const ([A-Z_]+) = '([a-z][a-z-]*)';$`)
	topicList  = regexp.MustCompile(`(?m)^export const TOPICS = Object\.freeze\(\[([A-Z_, ]*)\]\);$`)
)

// The dashboard's topics are the Hub's topic table: topics.js exports one
// constant per topic, named after it, in the table's order, and TOPICS
// lists them all, in that order, and nothing else. The file is read as
// text: its shape is this simple so that no JavaScript runtime is needed.
func TestTheDashboardsTopicsAreTheHubs(t *testing.T) {
	is := is.New(t)
	src, err := static.ReadFile(topicsModule)
	is.NoErr(err) // the module exists
	var names, values []string
	for _, m := range topicConst.FindAllSubmatch(src, -1) {
		names = append(names, string(m[1]))
		values = append(values, string(m[2]))
	}
	var want []string
	for _, s := range hub.Topics() {
		want = append(want, string(s.Name))
	}
	is.Equal(values, want) // the Hub's topics, in the table's order
	for i, v := range values {
		is.Equal(names[i], strings.ToUpper(strings.ReplaceAll(v, "-", "_"))) // each constant named after its topic
	}
	list := topicList.FindSubmatch(src)
	is.True(list != nil)                                        // TOPICS is exported
	is.Equal(strings.Split(string(list[1]), ", "), names)       // listing every topic, in order
	is.Equal(bytes.Count(src, []byte("export ")), len(names)+1) // and the module exports nothing the test did not read
}

// No other module of the dashboard spells a topic's name: they import it
// from topics.js, so the test above covers every use.
func TestOnlyTheTopicsModuleSpellsTopicNames(t *testing.T) {
	is := is.New(t)
	var names []string
	for _, s := range hub.Topics() {
		names = append(names, regexp.QuoteMeta(string(s.Name)))
	}
	literal := regexp.MustCompile("['\"`](" + strings.Join(names, "|") + ")['\"`]")
	checked := 0
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(p, "/vendor/") || !isModule(p) || p == topicsModule {
			return err
		}
		b, err := static.ReadFile(p)
		is.NoErr(err) // read
		checked++
		if m := literal.Find(b); m != nil {
			t.Errorf("%s spells the topic %s: import it from topics.js", p, m)
		}
		return nil
	})
	is.NoErr(err)        // walked
	is.True(checked > 1) // the dashboard's modules were read
}
