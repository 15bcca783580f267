package web

import (
	"bytes"
	"html/template"
)

// shellTemplate is the one HTML page of the dashboard. It holds no inline
// script or style (the Content-Security-Policy forbids both): the
// stylesheets and the entry module are files, and every module the entry
// imports statically is preloaded so the browser fetches them in
// parallel. Until the script
// runs, it shows a quiet loading line; without JavaScript, a note.
var shellTemplate = template.Must(template.New("shell").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="color-scheme" content="light dark">
<meta name="theme-color" content="#f6f5f1" media="(prefers-color-scheme: light)">
<meta name="theme-color" content="#15171c" media="(prefers-color-scheme: dark)">
<meta name="referrer" content="no-referrer">
<meta name="description" content="Wharf: your workspaces, from any browser.">
<title>Wharf</title>
<link rel="icon" href="{{.Icon}}" type="image/svg+xml">
<link rel="apple-touch-icon" href="{{.TouchIcon}}">
<link rel="manifest" href="{{.Manifest}}">
<link rel="stylesheet" href="{{.CSS}}">
<link rel="stylesheet" href="{{.ChatCSS}}">
<link rel="stylesheet" href="{{.CredCSS}}">
<link rel="stylesheet" href="{{.CloneCSS}}">
<link rel="stylesheet" href="{{.AgentsCSS}}">
<link rel="stylesheet" href="{{.TermCSS}}">
<link rel="stylesheet" href="{{.XtermCSS}}">
{{range .Modules}}<link rel="modulepreload" href="{{.}}">
{{end}}<script type="module" src="{{.Main}}"></script>
</head>
<body>
<div id="app"><p class="boot" role="status">Loading Wharf…</p></div>
<noscript><p class="noscript">Wharf's dashboard needs JavaScript. Everything it does is also in the HTTP API: see the README.</p></noscript>
</body>
</html>
`))

// renderShell renders the shell over the linked assets.
func renderShell(set *assetSet) *asset {
	var buf bytes.Buffer
	err := shellTemplate.Execute(&buf, struct {
		Icon, TouchIcon, Manifest, CSS, ChatCSS, CredCSS, CloneCSS, AgentsCSS, TermCSS, XtermCSS, Main string
		Modules                                                                                        []string
	}{set.url("icon.svg"), set.url("apple-touch-icon.png"), manifestPath, set.url("app.css"), set.url("chat.css"), set.url("credentials.css"), set.url("clone.css"),
		set.url("agents.css"), set.url("terminal.css"), set.url("vendor/xterm.css"), set.url(entryModule), set.modules()})
	if err != nil {
		panic(err)
	}
	return fixedAsset("shell", "text/html; charset=utf-8", buf.Bytes())
}
