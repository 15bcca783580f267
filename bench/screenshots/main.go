// Command screenshots pictures the dashboard for the README: it builds
// and starts a real `wharf serve` over a demonstration home folder, with
// the scripted ACP agent (fakes/acpagent --demo) as the coding agent
// "demo", holds a conversation with it, logs in with a headless Chromium
// and captures the main pages at desktop and phone widths, in light and
// dark, and a shell in the terminal, as PNG files beside this program.
//
//	go run ./bench/screenshots
//
// It needs Chromium (chromium on PATH, or WHARF_CHROMIUM) and git. It is
// never run by the test suite.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
)

func main() {
	out := flag.String("out", "", "folder for the PNG files (default: this program's folder, bench/screenshots)")
	flag.Parse()
	if err := run(*out); err != nil {
		log.Fatal(err)
	}
}

func run(out string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out == "" {
		gomod, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			return err
		}
		out = filepath.Join(filepath.Dir(strings.TrimSpace(string(gomod))), "bench", "screenshots")
	}
	chromium, ok := browsertest.Chromium()
	if !ok {
		return fmt.Errorf("no Chromium: install the chromium package or set WHARF_CHROMIUM")
	}
	// A fixed, short place, so the pictures show the same paths each time.
	tmp := filepath.Join(os.TempDir(), "wharf-demo")
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	home := filepath.Join(tmp, "ann")
	if err := browsertest.MakeDemo(ctx, home); err != nil {
		return err
	}
	bin, err := browsertest.Build(ctx, tmp)
	if err != nil {
		return err
	}
	agent, err := browsertest.BuildAgent(ctx, tmp)
	if err != nil {
		return err
	}
	demoAgent := browsertest.AgentFlag("demo", agent, filepath.Join(tmp, "agent"), "--demo")
	hub, err := browsertest.StartArgs(ctx, bin, tmp, []string{"--agent", demoAgent}, "HOME="+home, "USER=ann")
	if err != nil {
		return err
	}
	defer hub.Stop()
	api, err := hub.Login(ctx, "Terminal on the workstation")
	if err != nil {
		return err
	}
	var first string
	for _, d := range browsertest.Demo {
		id, err := api.Register(ctx, filepath.Join(home, "src", d.Folder), d.Name, d.Start)
		if err != nil {
			return fmt.Errorf("register %s: %w", d.Folder, err)
		}
		if first == "" {
			first = id
		}
	}
	if _, err := hub.Login(ctx, "Safari on iPhone"); err != nil {
		return err
	}
	// A file saved after the start shows as the fresh one.
	if err := os.WriteFile(filepath.Join(home, "src", browsertest.Demo[0].Folder, "docs", "phone.md"),
		[]byte("# On your phone\n\nOpen the Hub's address and log in.\n"), 0o644); err != nil {
		return err
	}

	if err := credentials(ctx, api, first); err != nil {
		return fmt.Errorf("the credentials: %w", err)
	}
	cid, err := converse(ctx, api, first)
	if err != nil {
		return fmt.Errorf("the conversation: %w", err)
	}

	b, err := browsertest.NewBrowser(ctx, chromium)
	if err != nil {
		return err
	}
	defer b.Close()
	// One login for every picture but the login page's, so Settings
	// shows this browser once beside the two devices above.
	login, err := b.NewPage(false)
	if err != nil {
		return err
	}
	defer login.Close()
	if err := login.LogIn(hub); err != nil {
		return err
	}
	shots := []struct {
		name, path, ready string
		screens           []browsertest.Screen
		schemes           []string
	}{
		{"login", "login", `document.querySelector('input[name=password]')`, both(), []string{"light"}},
		{"workspaces", "", `document.querySelectorAll('.ws-row').length === 4 && document.querySelector('.live-on')`, both(), []string{"light", "dark"}},
		{"workspace", "w/" + first, `document.querySelector('.tree-file') && document.querySelector('.commits li')`, both(), []string{"light", "dark"}},
		{"conversation", "w/" + first + "/c/" + url.PathEscape(cid), `document.querySelector('.request-pending') && document.querySelector('.live-on') && document.querySelector('.ctx')`,
			[]browsertest.Screen{tallDesktop, browsertest.Phone}, []string{"light", "dark"}},
		{"add", "add?path=" + filepath.Join(home, "src"), `document.querySelector('.dir')`, both(), []string{"light"}},
		{"credentials", "credentials", `document.querySelectorAll('.cred-row').length === 3 && document.querySelector('.cred-row .assignments')`, both(), []string{"light"}},
		{"settings", "settings", `document.querySelector('.sessions li') && document.querySelector('.page-settings code')`, []browsertest.Screen{browsertest.Desktop}, []string{"light"}},
	}
	for _, s := range shots {
		for _, screen := range s.screens {
			for _, scheme := range s.schemes {
				if err := shoot(b, hub, out, s.name, s.path, s.ready, screen, scheme); err != nil {
					return fmt.Errorf("%s at %s (%s): %w", s.name, screen.Name, scheme, err)
				}
			}
		}
	}
	for _, screen := range both() {
		if err := terminal(b, hub, out, first, screen); err != nil {
			return fmt.Errorf("terminal at %s: %w", screen.Name, err)
		}
	}
	return nil
}

// terminal opens a shell on the workspace's page, runs two commands in it
// and pictures the terminal, with the key bar on a phone.
func terminal(b *browsertest.Browser, hub *browsertest.Hub, out, ws string, screen browsertest.Screen) error {
	p, err := b.NewPage(false)
	if err != nil {
		return err
	}
	defer p.Close()
	if err := p.Emulate(screen); err != nil {
		return err
	}
	if err := p.Go(hub.URL + "w/" + ws); err != nil {
		return err
	}
	if err := p.Wait(`document.querySelector('.term-section .btn')`, 20*time.Second); err != nil {
		return err
	}
	if err := p.ClickText(`.term-section`, "New shell"); err != nil {
		return err
	}
	live := `document.querySelector('.term-panel[data-state=live] .xterm-rows')`
	if err := p.Wait(live, 20*time.Second); err != nil {
		return err
	}
	// Each command once the one before has printed (typed ahead, its
	// echo would show twice).
	for _, c := range []struct{ line, shows string }{{"git log --oneline -4", "Start the project"}, {"ls", "README.md"}} {
		if err := p.Keys(`.term-host .xterm-helper-textarea`, c.line+"\r"); err != nil {
			return err
		}
		shown := fmt.Sprintf(`[...document.querySelectorAll('.term-host .xterm-rows > div')].some((r) => r.textContent.includes(%s))`, browsertest.JS(c.shows))
		if err := p.Wait(shown, 20*time.Second); err != nil {
			return err
		}
	}
	// The terminal's card just below the page's sticky header.
	if _, err := browsertest.Eval[bool](p, `(() => {
		const head = document.querySelector('header')?.getBoundingClientRect().bottom || 0;
		window.scrollTo(0, document.querySelector('.term-section').getBoundingClientRect().top + window.scrollY - head - 12);
		return true;
	})()`); err != nil {
		return err
	}
	if errs := p.Errors(); len(errs) > 0 {
		return fmt.Errorf("the page logged errors: %s", strings.Join(errs, "; "))
	}
	file := filepath.Join(out, "terminal-"+screen.Name+".png")
	fmt.Println("wrote", file)
	return p.Screenshot(file)
}

// converse holds the conversation the pictures show: the demo agent
// rewrites a guide in one turn, and in the next asks permission to push.
func converse(ctx context.Context, api *browsertest.Client, ws string) (string, error) {
	cid, err := api.CreateConversation(ctx, ws, "demo", "Phone guide")
	if err != nil {
		return "", err
	}
	if _, err := api.Send(ctx, ws, cid, "The phone guide is one line. Rewrite it as steps people can follow, and check the links in docs/."); err != nil {
		return "", err
	}
	if _, err := api.Send(ctx, ws, cid, "Looks good: push it."); err != nil {
		return "", err
	}
	// The second message is held until the first turn ends, then asks.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		snap, err := api.Snapshot(ctx, ws, cid)
		if err != nil {
			return "", err
		}
		for _, it := range snap.Items {
			if it["kind"] == "permission" && it["state"] == "pending" {
				return cid, nil
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("no permission request: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// credentials gives the Hub what the Credentials page shows: an SSH key
// that signs, unlocked and the first workspace's signing key; a token for
// GitHub that workspace logs in with; an OpenPGP key still locked. The
// workspace is restarted to be lent them, before its conversation starts.
func credentials(ctx context.Context, api *browsertest.Client, ws string) error {
	var ssh, tok struct{ Credential struct{ ID string } }
	steps := []struct {
		path string
		body any
		out  any
	}{
		{"/api/hub/credentials/ssh/generate", map[string]any{"name": "Laptop signing", "capabilities": []string{"ssh-signing"}, "passphrase": "demo passphrase"}, &ssh},
		{"/api/hub/credentials/token", map[string]any{"name": "GitHub", "host": "github.com", "username": "ann", "token": "demo-token", "capabilities": []string{"https-git", "github-cli"}}, &tok},
		{"/api/hub/credentials/openpgp/generate", map[string]any{"name": "Release signing", "userId": "Ann <ann@example.com>", "passphrase": "demo passphrase"}, nil},
	}
	for _, st := range steps {
		if err := api.Do(ctx, "POST", st.path, st.body, st.out); err != nil {
			return err
		}
	}
	for _, st := range []struct {
		path string
		body any
	}{
		{"/api/hub/credentials/" + ssh.Credential.ID + "/unlock", map[string]string{"passphrase": "demo passphrase"}},
		{"/api/hub/workspaces/" + ws + "/credential-assignments", map[string]any{"signing": map[string]string{"credentialId": ssh.Credential.ID}}},
		{"/api/hub/credentials/" + tok.Credential.ID + "/assign", map[string]any{"workspaceId": ws, "role": "authentication", "host": "github.com", "usePolicy": "ask-once"}},
		// Restarted, the session is lent them (no "restart required").
		{"/api/hub/sessions/" + ws + "/stop", nil},
		{"/api/hub/sessions/" + ws + "/start", nil},
	} {
		if err := api.Do(ctx, "POST", st.path, st.body, nil); err != nil {
			return err
		}
	}
	return nil
}

// tallDesktop is a desktop tall enough to show a whole turn of the
// conversation, from its head to the composer.
var tallDesktop = browsertest.Screen{Name: "desktop", Width: 1280, Height: 1480, Scale: 1}

func both() []browsertest.Screen { return []browsertest.Screen{browsertest.Desktop, browsertest.Phone} }

// shoot captures one page in a fresh tab: the login page in a browser
// context of its own (no session), the others in the logged-in one.
func shoot(b *browsertest.Browser, hub *browsertest.Hub, out, name, path, ready string, screen browsertest.Screen, scheme string) error {
	p, err := b.NewPage(name == "login")
	if err != nil {
		return err
	}
	defer p.Close()
	if err := p.Emulate(screen); err != nil {
		return err
	}
	if err := p.ColorScheme(scheme); err != nil {
		return err
	}
	if err := p.Go(hub.URL + path); err != nil {
		return err
	}
	if err := p.Wait(ready, 20*time.Second); err != nil {
		return err
	}
	// Let fonts settle and the "saved" highlight fade a little.
	if err := p.Wait(`document.fonts.status === 'loaded'`, 5*time.Second); err != nil {
		return err
	}
	file := fmt.Sprintf("%s-%s", name, screen.Name)
	if scheme != "light" {
		file += "-" + scheme
	}
	if errs := p.Errors(); len(errs) > 0 {
		return fmt.Errorf("the page logged errors: %s", strings.Join(errs, "; "))
	}
	fmt.Println("wrote", filepath.Join(out, file+".png"))
	return p.Screenshot(filepath.Join(out, file+".png"))
}
