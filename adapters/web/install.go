package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
)

// The files that make the dashboard an installable web app that can be
// sent push notifications: the web app manifest and the service worker.
// Unlike the other assets they keep their URLs (an installed app and a
// registered worker are known by them), so they are revalidated rather
// than cached for good. Both are outside the API contract.
//
// The PNG icons were rendered once from icon.svg by a headless Chromium
// and are committed: icon-192.png and icon-512.png are icon.svg itself;
// icon-maskable-512.png and apple-touch-icon.png (180 px) are its glyph,
// scaled to 78 %, on a full square of its blue, as maskable icons and iOS
// (which rounds the corners itself) need.

// Where the fixed-URL files are served.
const (
	manifestPath = "/manifest.webmanifest"
	workerPath   = "/sw.js"
)

// workerSource is the service worker's file under static/. It is not a
// hashed asset: loadAssets leaves it out.
const workerSource = "sw.js"

// manifestColor is the page's background (--bg of app.css, light): the
// splash screen's and the installed app's frame colour. The shell's
// theme-color metas take over, light or dark, once the page has loaded.
const manifestColor = "#f6f5f1"

// webManifest is the web app manifest's JSON.
type webManifest struct {
	ID              string         `json:"id"`
	Name            string         `json:"name"`
	ShortName       string         `json:"short_name"`
	Description     string         `json:"description"`
	StartURL        string         `json:"start_url"`
	Scope           string         `json:"scope"`
	Display         string         `json:"display"`
	BackgroundColor string         `json:"background_color"`
	ThemeColor      string         `json:"theme_color"`
	Icons           []manifestIcon `json:"icons"`
}

type manifestIcon struct {
	Src     string `json:"src"`
	Sizes   string `json:"sizes"`
	Type    string `json:"type"`
	Purpose string `json:"purpose"`
}

// renderManifest renders the manifest, naming the icons by their hashed URLs.
func renderManifest(set *assetSet) *asset {
	m := webManifest{
		ID: "/", Name: "Wharf", ShortName: "Wharf", Description: "Your workspaces, from any browser.",
		StartURL: "/", Scope: "/", Display: "standalone", BackgroundColor: manifestColor, ThemeColor: manifestColor,
		Icons: []manifestIcon{
			{set.url("icon-192.png"), "192x192", "image/png", "any"},
			{set.url("icon-512.png"), "512x512", "image/png", "any"},
			{set.url("icon-maskable-512.png"), "512x512", "image/png", "maskable"},
			{set.url("icon.svg"), "any", "image/svg+xml", "any"},
		},
	}
	body, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		panic(err)
	}
	return fixedAsset("manifest", "application/manifest+json", body)
}

// renderWorker reads the service worker and names its icon by the icon's
// hashed URL. The quoted name must occur exactly once; otherwise the file
// and this function disagree, a defect its tests catch.
func renderWorker(fsys fs.FS, set *assetSet) (*asset, error) {
	src, err := fs.ReadFile(fsys, workerSource)
	if err != nil {
		return nil, err
	}
	const icon = `'icon-192.png'`
	if n := bytes.Count(src, []byte(icon)); n != 1 {
		return nil, fmt.Errorf("web: %s names %s %d times, not once", workerSource, icon, n)
	}
	body := bytes.Replace(src, []byte(icon), []byte(`'`+set.url("icon-192.png")+`'`), 1)
	return fixedAsset(workerSource, assetTypes[".js"], body), nil
}

// fixedAsset is a file served at a fixed URL, with its ETag and, when it
// pays, compressed.
func fixedAsset(name, contentType string, body []byte) *asset {
	sum := sha256.Sum256(body)
	return &asset{name: name, contentType: contentType, body: body, gz: compress(body),
		etag: `"` + hex.EncodeToString(sum[:])[:12] + `"`}
}
