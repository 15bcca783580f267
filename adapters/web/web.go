// Package web serves Wharf's browser dashboard: static assets embedded
// with go:embed and the app shell, an HTML page that loads them, at the
// dashboard's client routes.
//
// The dashboard is a client of the public API only. Its JavaScript talks
// to the Hub through the documented operations and the live stream
// (GET /api/hub/live), authenticated by the session cookie that POST
// /login sets and held to the same same-origin rules as any browser
// client. This package therefore knows nothing of the Hub: it imports no
// hub, httpapi or other adapter, serves no data, and needs no session. The
// daemon hands it the GET and HEAD requests outside /api/ and /s/
// (httpapi.Options.Pages). Only its tests read package hub: the live
// topics the dashboard names (static/topics.js) are held to hub's topic
// table there.
//
// Assets are linked once at startup: every module import is rewritten to
// the hashed name of the module it imports, so each file's URL names the
// hash of its content and can be cached for a year; only the shell, which
// names them, is revalidated. Each file is gzipped once, at startup, and
// sent compressed to clients that accept it.
package web

import (
	"embed"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
)

//go:embed static
var static embed.FS

// Security headers of every answer. The policy allows scripts, styles,
// workers and fetches from the Hub's own origin only: no inline script
// or style, no eval, no framing by any origin, and Trusted Types so that
// no code path can assign HTML strings to the DOM. The one Trusted Types
// policy allowed, workerPolicy, is notify/push.js's: it lets exactly the
// service worker's URL through to navigator.serviceWorker.register (a
// script-URL sink), and nothing else.
const (
	workerPolicy          = "wharf-worker"
	contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"font-src 'self'; connect-src 'self'; manifest-src 'self'; worker-src 'self'; base-uri 'none'; form-action 'self'; " +
		"frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types " + workerPolicy
	permissionsPolicy = "camera=(), microphone=(), geolocation=(), payment=(), usb=()"
	cacheImmutable    = "public, max-age=31536000, immutable"
	cacheRevalidate   = "no-cache"
)

// Handler serves the dashboard. It is safe for concurrent use; its
// content is fixed at NewHandler.
type Handler struct {
	assets   *assetSet
	shell    *asset
	manifest *asset // at manifestPath
	worker   *asset // the service worker, at workerPath
}

// NewHandler links the assets and renders the shell. It panics when the
// assets do not link (a module importing a missing file, an import
// cycle): that is a defect of this package's files, which its tests catch.
func NewHandler() *Handler {
	fsys, err := fs.Sub(static, "static")
	if err != nil {
		panic(err)
	}
	set, err := loadAssets(fsys)
	if err != nil {
		panic(err)
	}
	worker, err := renderWorker(fsys, set)
	if err != nil {
		panic(err)
	}
	return &Handler{assets: set, shell: renderShell(set), manifest: renderManifest(set), worker: worker}
}

// clientRoute reports whether p, an escaped path, is a page of the
// dashboard, which the shell serves and the script renders: the workspace
// list, the login page, adding a workspace, credentials, agent logins,
// settings, one workspace's page and one of its conversations
// (/w/{id}/c/{conversationId}, each segment percent-encoded: conversation
// ids hold a colon and may hold a slash), cloning a repository and one
// clone job (/clone/{jobId}).
func clientRoute(p string) bool {
	switch p {
	case "/", "/login", "/add", "/settings", "/credentials", "/agents", "/clone":
		return true
	}
	if job, ok := strings.CutPrefix(p, "/clone/"); ok {
		return job != "" && !strings.Contains(job, "/")
	}
	rest, ok := strings.CutPrefix(p, "/w/")
	if !ok {
		return false
	}
	seg := strings.Split(rest, "/")
	switch len(seg) {
	case 1:
		return seg[0] != ""
	case 3:
		return seg[0] != "" && seg[1] == "c" && seg[2] != ""
	}
	return false
}

// ServeHTTP answers GET and HEAD: a hashed asset, the shell at a client
// route, or the shell with 404 elsewhere (the script then shows its "not
// found" page, with the navigation). Other methods answer 405.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	hd.Set("Permissions-Policy", permissionsPolicy)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	if a := h.assets.byURL[p]; a != nil {
		serve(w, r, a, cacheImmutable, http.StatusOK)
		return
	}
	switch p {
	case workerPath:
		serve(w, r, h.worker, cacheRevalidate, http.StatusOK)
		return
	case manifestPath:
		serve(w, r, h.manifest, cacheRevalidate, http.StatusOK)
		return
	}
	if strings.HasPrefix(p, "/assets/") {
		// An asset of another build (a page left open across an upgrade
		// asks for names that no longer exist): a plain 404 that no
		// cache keeps.
		hd.Set("Cache-Control", "no-store")
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	status := http.StatusOK
	if !clientRoute(r.URL.EscapedPath()) {
		status = http.StatusNotFound
	}
	serve(w, r, h.shell, cacheRevalidate, status)
}

// serve writes a, gzipped when the client accepts it, with its ETag; a
// matching If-None-Match answers 304. Each encoding has its own ETag, so
// caches never serve one for the other.
func serve(w http.ResponseWriter, r *http.Request, a *asset, cache string, status int) {
	hd := w.Header()
	hd.Set("Content-Type", a.contentType)
	hd.Set("Cache-Control", cache)
	body, etag := a.body, a.etag
	if a.gz != nil {
		hd.Set("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			body, etag = a.gz, strings.TrimSuffix(a.etag, `"`)+`-gz"`
			hd.Set("Content-Encoding", "gzip")
		}
	}
	hd.Set("ETag", etag)
	if status == http.StatusOK && etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// acceptsGzip reports whether Accept-Encoding lists gzip without q=0.
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for part := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
				continue
			}
			q := strings.ReplaceAll(strings.ToLower(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

// etagMatches reports whether an If-None-Match header names etag (or *).
func etagMatches(header, etag string) bool {
	for part := range strings.SplitSeq(header, ",") {
		t := strings.TrimPrefix(strings.TrimSpace(part), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}
