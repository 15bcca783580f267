package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
)

// asset is one static file as the handler serves it: linked (its imports
// point at the hashed names of the modules they import), named after the
// hash of that content, and compressed once.
type asset struct {
	name        string // path below static/, e.g. "pages/login.js"
	url         string // "/assets/pages/login.<hash>.js"
	contentType string
	body        []byte
	gz          []byte   // nil when compressing does not pay
	etag        string   // strong, of body
	deps        []string // modules it imports statically
	lazy        []string // modules it imports with import(): loaded when needed
}

// assetTypes are the files served, by extension; anything else under
// static/ (licences, notes) stays in the repository only.
var assetTypes = map[string]string{
	".js":  "text/javascript; charset=utf-8",
	".mjs": "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
	".svg": "image/svg+xml",
	".png": "image/png",
}

// aliases resolve the bare specifiers that vendored modules import, so
// the page needs no import map (which would be an inline script).
var aliases = map[string]string{
	"preact":       "vendor/preact.mjs",
	"preact/hooks": "vendor/hooks.mjs",
	"htm":          "vendor/htm.mjs",
}

// importRE finds the module specifiers of static imports and re-exports
// (`from "x"`, `import "x"`) and of dynamic imports (`import("x")`), in
// our own sources and in the vendored minified ones alike.
var importRE = regexp.MustCompile(`(\bfrom\s*|\bimport\s*\(?\s*)(["'])([^"'\n]+)(["'])`)

// assetSet is every served asset, by URL and by source name.
type assetSet struct {
	byURL  map[string]*asset
	byName map[string]*asset
}

// loadAssets reads the files of fsys, links the modules and names each
// file after the hash of its linked content. A module that imports a
// file that does not exist, or an import cycle, is an error: the content
// hash of a module depends on those of its imports.
func loadAssets(fsys fs.FS) (*assetSet, error) {
	src := map[string][]byte{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if _, ok := assetTypes[path.Ext(p)]; !ok || p == workerSource {
			return nil // not served, or served at a fixed URL (install.go)
		}
		b, err := fs.ReadFile(fsys, p)
		src[p] = b
		return err
	})
	if err != nil {
		return nil, err
	}
	set := &assetSet{byURL: map[string]*asset{}, byName: map[string]*asset{}}
	visiting := map[string]bool{}
	var link func(name string) (*asset, error)
	link = func(name string) (*asset, error) {
		if a := set.byName[name]; a != nil {
			return a, nil
		}
		if visiting[name] {
			return nil, fmt.Errorf("web: import cycle through %s", name)
		}
		visiting[name] = true
		body := src[name]
		a := &asset{name: name, contentType: assetTypes[path.Ext(name)]}
		if isModule(name) {
			var linkErr error
			body = importRE.ReplaceAllFunc(body, func(m []byte) []byte {
				sm := importRE.FindSubmatch(m)
				if linkErr != nil || !bytes.Equal(sm[2], sm[4]) {
					return m
				}
				dep, ok := resolve(name, string(sm[3]))
				if !ok {
					return m
				}
				if _, exists := src[dep]; !exists {
					linkErr = fmt.Errorf("web: %s imports %q, which is no asset", name, sm[3])
					return m
				}
				d, err := link(dep)
				if err != nil {
					linkErr = err
					return m
				}
				if strings.Contains(string(sm[1]), "(") {
					a.lazy = append(a.lazy, dep)
				} else {
					a.deps = append(a.deps, dep)
				}
				return []byte(string(sm[1]) + string(sm[2]) + d.url + string(sm[4]))
			})
			if linkErr != nil {
				return nil, linkErr
			}
		}
		sum := sha256.Sum256(body)
		hash := hex.EncodeToString(sum[:])[:12]
		ext := path.Ext(name)
		a.url = "/assets/" + strings.TrimSuffix(name, ext) + "." + hash + ext
		a.body, a.etag = body, `"`+hash+`"`
		a.gz = compress(body)
		set.byName[name], set.byURL[a.url] = a, a
		delete(visiting, name)
		return a, nil
	}
	names := make([]string, 0, len(src))
	for n := range src {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, err := link(n); err != nil {
			return nil, err
		}
	}
	return set, nil
}

func isModule(name string) bool {
	ext := path.Ext(name)
	return ext == ".js" || ext == ".mjs"
}

// resolve maps a specifier imported by module from to a source name:
// relative ones against from's folder, bare ones through aliases. ok is
// false for specifiers that are not ours to link (a full URL, say).
func resolve(from, spec string) (string, bool) {
	if a, ok := aliases[spec]; ok {
		return a, true
	}
	if strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../") {
		return path.Join(path.Dir(from), spec), true
	}
	return "", false
}

// compress gzips b at the best level, or returns nil when that saves
// less than a tenth (an already compressed image, a tiny file).
func compress(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	if buf.Len() > len(b)*9/10 {
		return nil
	}
	return buf.Bytes()
}

// modules returns the URLs of the modules the entry module imports
// statically, itself and transitively, sorted, for the shell's
// modulepreload links: the browser then fetches them all at once instead
// of discovering them import by import. Modules reached only through a
// dynamic import() (the conversation page) are left out: they load when
// a page needs them, and the first load does not pay for them.
func (s *assetSet) modules() []string {
	seen := map[string]bool{}
	var urls []string
	var walk func(name string)
	walk = func(name string) {
		a := s.byName[name]
		if a == nil || seen[name] {
			return
		}
		seen[name] = true
		urls = append(urls, a.url)
		for _, d := range a.deps {
			walk(d)
		}
	}
	walk(entryModule)
	sort.Strings(urls)
	return urls
}

// entryModule is the module the shell runs.
const entryModule = "main.js"

// url returns the hashed URL of the source file name; it panics on an
// unknown name, which only a wrong constant in this package can cause.
func (s *assetSet) url(name string) string {
	a := s.byName[name]
	if a == nil {
		panic("web: no asset " + name)
	}
	return a.url
}
