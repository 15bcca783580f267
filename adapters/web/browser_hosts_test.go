package web_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
)

// hostsSays holds when Settings' hosts section says text.
func hostsSays(text string) string {
	return `(document.querySelector('section[aria-labelledby=hosts-title]') || {innerText: ''}).innerText.includes(` +
		browsertest.JS(text) + `)`
}

// On a phone: a machine is added from Settings once its test passes (a
// failed test says why and adds nothing), the Add page picks it, browses
// its disk, makes, renames and removes a folder there, clones a
// repository there, registers a folder there, and the workspace shows
// where it lives; the machine cannot be removed while the workspace lives there.
func TestBrowserAWorkspaceLivesOnAnotherMachine(t *testing.T) {
	is := is.New(t)
	hosts := fakes.NewHosts()
	gpu := hosts.Machine("gpu")
	gpu.FS.MkdirAll("/home/gpu/src/model")
	is.NoErr(gpu.Git.Init(t.Context(), "/home/gpu/src/model")) // a repository on the host only
	gpu.Git.SetRefs("/home/gpu/src/model", []string{"main"}, nil)
	ip := notifyHub(t, browsertest.WithHosts(hosts))
	p := openPage(t, browsertest.Phone)
	must(t, p.LogIn(ip.Hub))
	must(t, p.Go(ip.URL+"settings"))
	must(t, p.Wait(hostsSays("Other machines"), wait))

	gpu.FailCheck(hub.Errorf(hub.Unavailable, "the host key of gpu.example.net is not known: add it to known_hosts first"))
	must(t, p.Type(`.host-add input[placeholder=gpu]`, "gpu"))
	must(t, p.Type(`.host-add input[placeholder^=you]`, "ann@gpu.example.net"))
	must(t, p.ClickText(`.host-add`, "Test and add"))
	must(t, p.Wait(hostsSays("The host key of gpu.example.net is not known: add it to known_hosts first."), wait)) // why
	must(t, p.Wait(`!document.querySelector('.hosts')`, wait))                                                     // nothing added

	gpu.FailCheck(nil)
	must(t, p.ClickText(`.host-add`, "Test and add"))
	must(t, p.Wait(`document.querySelector('.hosts li') && `+hostsSays("ann@gpu.example.net"), wait)) // added
	must(t, p.Wait(fitsIn(browsertest.Phone), wait))                                                  // and fits

	must(t, p.Go(ip.URL+"add"))
	must(t, p.Wait(`document.querySelector('.seg.where')`, wait)) // the machine picker
	must(t, p.ClickText(`.seg.where`, "gpu"))
	must(t, p.Wait(`location.search.includes('backend=ssh%3Agpu') && document.querySelector('.browser-here').innerText === '/home/gpu'`, wait)) // its home
	must(t, p.ClickText(`.dirs`, "src"))
	must(t, p.ClickText(`.browser-bar`, "New folder")) // a folder made there
	must(t, p.Type(`dialog[open] input`, "scratch"))
	must(t, p.ClickText(`dialog[open]`, "Create"))
	must(t, p.Wait(`location.search.includes('backend=ssh%3Agpu') && document.querySelector('.browser-here').innerText === '/home/gpu/src/scratch'`, wait)) // and opened, on the host
	_, err := gpu.FS.Lstat("/home/gpu/src/scratch")
	is.NoErr(err) // on its disk
	must(t, p.ClickText(`.browser-bar`, "Up"))
	must(t, p.Wait(`document.querySelector('.browser-here').innerText === '/home/gpu/src' && document.querySelectorAll('.dir').length === 2`, wait))
	must(t, p.Click(`button[aria-label="Rename folder scratch"]`)) // renamed there
	must(t, p.Type(`dialog[open] input`, "scratch-2"))
	must(t, p.ClickText(`dialog[open]`, "Rename"))
	must(t, p.Wait(`[...document.querySelectorAll('.dir-name')].some((e) => e.innerText === 'scratch-2')`, wait))
	_, err = gpu.FS.Lstat("/home/gpu/src/scratch-2")
	is.NoErr(err)                                                    // on its disk
	must(t, p.Click(`button[aria-label="Remove folder scratch-2"]`)) // and removed there
	must(t, p.ClickText(`dialog[open]`, "Remove"))
	must(t, p.Wait(`document.querySelectorAll('.dir').length === 1`, wait))
	_, err = gpu.FS.Lstat("/home/gpu/src/scratch-2")
	is.True(err != nil) // gone from its disk

	gpu.Git.ScriptClone("https://example.com/me/lib.git", fakes.CloneScript{Output: []string{"Cloning into 'lib'...\r\n"}})
	must(t, p.ClickText(`.add-panels`, "Clone a repository")) // a clone made there
	must(t, p.Wait(`location.pathname === '/clone' && document.querySelector('.dest')?.innerText === '/home/gpu/src'`, wait))
	must(t, p.Wait(`document.querySelector('#dest-label').innerText.includes('on gpu')`, wait)) // saying where
	must(t, p.Type(`input[name=url]`, "https://example.com/me/lib.git"))
	must(t, p.ClickText(`.clone-form`, "Change"))
	must(t, p.Wait(`[...document.querySelectorAll('dialog[open] .dir-name')].some((e) => e.innerText === 'model')`, wait)) // its picker browses the host
	must(t, p.ClickText(`dialog[open]`, "Clone here"))
	must(t, p.ClickText(`.clone-form`, "Clone"))
	must(t, p.Wait(phaseIs("result", "done"), wait))
	must(t, p.Wait(fitsIn(browsertest.Phone), wait))
	is.True(strings.Contains(p.Text(`.clone-result`), "/home/gpu/src/lib")) // into the folder there
	fi, err := gpu.FS.Lstat("/home/gpu/src/lib")
	is.True(err == nil && fi.IsDir())          // on the host's disk
	is.Equal(gpu.Git.Calls(fakes.GitClone), 1) // by the host's git

	must(t, p.Go(ip.URL+"add?backend=ssh%3Agpu&path=/home/gpu/src"))
	must(t, p.ClickText(`.dirs`, "model"))
	must(t, p.Wait(`document.querySelector('.browser-here').innerText === '/home/gpu/src/model'`, wait))
	must(t, p.ClickText(`section[aria-labelledby=register-title]`, "Register"))
	must(t, p.Wait(`location.pathname === '/w/model'`, wait))                                               // registered
	must(t, p.Wait(`(document.querySelector('.ws-host') || {innerText: ''}).innerText === 'on gpu'`, wait)) // showing where
	is.Equal(gpu.Backend.StartCount("model"), 1)                                                            // started on the host
	must(t, p.Wait(`document.querySelector('.worktrees')?.innerText.includes('No worktrees yet')`, wait))   // its worktrees read there
	must(t, p.ClickText(`.worktrees`, "New task"))
	must(t, p.Type(`dialog[open] input[name=branch]`, "spike"))
	must(t, p.ClickText(`dialog[open]`, "Create"))
	// A worktree made there, running there (the fake host's sessions hold
	// no conversations, so the dialog's next step is not taken here).
	must(t, p.Wait(`document.querySelector('.wt-row[data-branch="spike"]')?.innerText.includes('/home/gpu/src/model.worktrees/spike')`, wait))
	must(t, p.ClickText(`dialog[open]`, "Cancel"))
	fi, err = gpu.FS.Lstat("/home/gpu/src/model.worktrees/spike")
	is.True(err == nil && fi.IsDir())            // on the host's disk
	is.Equal(gpu.Backend.StartCount("spike"), 1) // and started there
	must(t, p.Go(ip.URL+"w/model"))
	gpu.Backend.CrashBecause("model", "gpu could not be reached for 45 s; its session ended.")
	must(t, p.Wait(`(document.querySelector('.ws-meta .ws-warn') || {innerText: ''}).innerText === 'gpu could not be reached for 45 s; its session ended.'`, wait)) // why it stopped

	must(t, p.Go(ip.URL+"settings"))
	must(t, p.Wait(hostsSays("3 workspaces"), wait)) // the repository, its worktree and the clone
	must(t, p.Click(`button[aria-label="Remove gpu"]`))
	must(t, p.ClickText(`dialog`, "Remove"))
	must(t, p.Wait(`(document.querySelector('dialog') || {innerText: ''}).innerText.includes('forget them first')`, wait)) // refused, saying why
}
