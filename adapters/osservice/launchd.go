package osservice

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LaunchdPlist renders s as a launchd agent's property list.
//
// launchd starts the agent at load (RunAtLoad) and again after it exits
// with a failure (KeepAlive SuccessfulExit=false), no sooner than
// ThrottleInterval after the last start; its output goes to s.LogFile,
// files are created 0600 (Umask 077).
func LaunchdPlist(s Spec) ([]byte, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if !filepath.IsAbs(s.LogFile) {
		return nil, fmt.Errorf("osservice: log file %q is not an absolute path", s.LogFile)
	}
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
`)
	str := func(v string) { fmt.Fprintf(&b, "\t<string>%s</string>\n", xmlText(v)) }
	key := func(k string) { fmt.Fprintf(&b, "\t<key>%s</key>\n", xmlText(k)) }
	key("Label")
	str(s.Label)
	key("ProgramArguments")
	b.WriteString("\t<array>\n")
	for _, a := range append([]string{s.Program}, s.Args...) {
		fmt.Fprintf(&b, "\t\t<string>%s</string>\n", xmlText(a))
	}
	b.WriteString("\t</array>\n")
	if len(s.Env) > 0 {
		key("EnvironmentVariables")
		b.WriteString("\t<dict>\n")
		for _, e := range s.Env {
			fmt.Fprintf(&b, "\t\t<key>%s</key>\n\t\t<string>%s</string>\n", xmlText(e.Name), xmlText(e.Value))
		}
		b.WriteString("\t</dict>\n")
	}
	key("RunAtLoad")
	b.WriteString("\t<true/>\n")
	key("KeepAlive")
	b.WriteString("\t<dict>\n\t\t<key>SuccessfulExit</key>\n\t\t<false/>\n\t</dict>\n")
	key("ThrottleInterval")
	b.WriteString("\t<integer>5</integer>\n")
	key("Umask")
	b.WriteString("\t<integer>63</integer>\n") // 077
	key("StandardOutPath")
	str(s.LogFile)
	key("StandardErrorPath")
	str(s.LogFile)
	b.WriteString("</dict>\n</plist>\n")
	return b.Bytes(), nil
}

// xmlText escapes v for XML character data.
func xmlText(v string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(v)) // a strings.Builder does not fail
	return b.String()
}

// PlistProgramArguments reads ProgramArguments back from a property list.
func PlistProgramArguments(plist []byte) ([]string, error) {
	v, err := plistEntry(plist, "ProgramArguments")
	if err != nil {
		return nil, err
	}
	if v.XMLName.Local != "array" {
		return nil, errors.New("ProgramArguments is not an array")
	}
	return v.Strings, nil
}

// PlistLogFile reads StandardErrorPath back from a property list.
func PlistLogFile(plist []byte) (string, error) {
	v, err := plistEntry(plist, "StandardErrorPath")
	if err != nil {
		return "", err
	}
	return v.Text, nil
}

// plistValue is one value of a property list's top dictionary: a string
// or an array of strings is all this package reads back.
type plistValue struct {
	XMLName xml.Name
	Text    string   `xml:",chardata"`
	Strings []string `xml:"string"`
}

// plistEntry returns the value of key in the top dictionary of plist.
func plistEntry(plist []byte, key string) (plistValue, error) {
	var doc struct {
		Dict struct {
			Items []plistValue `xml:",any"`
		} `xml:"dict"`
	}
	if err := xml.Unmarshal(plist, &doc); err != nil {
		return plistValue{}, err
	}
	items := doc.Dict.Items
	for i := 0; i+1 < len(items); i++ {
		if items[i].XMLName.Local == "key" && items[i].Text == key {
			return items[i+1], nil
		}
	}
	return plistValue{}, fmt.Errorf("no %s", key)
}

// Launchd installs a launchd agent in the user's GUI domain.
type Launchd struct {
	// Dir is ~/Library/LaunchAgents.
	Dir string
	// Label is the agent's label; its file is Label.plist.
	Label string
	// UID is the user's id: the domain is gui/UID.
	UID int
	// Run runs launchctl.
	Run Runner
}

// Path implements Manager.
func (m *Launchd) Path() string { return filepath.Join(m.Dir, m.Label+".plist") }

// Render implements Manager.
func (m *Launchd) Render(s Spec) ([]byte, error) { return LaunchdPlist(s) }

func (m *Launchd) domain() string  { return "gui/" + strconv.Itoa(m.UID) }
func (m *Launchd) service() string { return m.domain() + "/" + m.Label }

// loaded reports whether launchd has the agent loaded.
func (m *Launchd) loaded(ctx context.Context) bool {
	_, err := m.Run(ctx, "launchctl", "print", m.service())
	return err == nil
}

// Install implements Manager.
func (m *Launchd) Install(ctx context.Context, unit []byte, force bool) (Outcome, error) {
	outcome, err := place(m.Path(), unit, force, func() error {
		// launchd does not create the log file's folder.
		logs, err := PlistLogFile(unit)
		if err != nil {
			return err
		}
		return os.MkdirAll(filepath.Dir(logs), 0o700)
	})
	if err != nil {
		return 0, err
	}
	if err := m.start(ctx, outcome); err != nil {
		return outcome, &NotStartedError{Path: m.Path(), Err: err}
	}
	return outcome, nil
}

// start loads and starts the agent; a loaded one is left alone when its
// file is unchanged, and booted out first when it was replaced, so
// launchd reads the new file.
func (m *Launchd) start(ctx context.Context, outcome Outcome) error {
	if m.loaded(ctx) {
		if outcome == Unchanged {
			return nil
		}
		if _, err := m.Run(ctx, "launchctl", "bootout", m.service()); err != nil {
			return err
		}
	}
	// A `launchctl disable` earlier would keep bootstrap from starting it.
	if _, err := m.Run(ctx, "launchctl", "enable", m.service()); err != nil {
		return err
	}
	_, err := m.Run(ctx, "launchctl", "bootstrap", m.domain(), m.Path())
	return err
}

// Uninstall implements Manager.
func (m *Launchd) Uninstall(ctx context.Context) (bool, error) {
	if _, err := os.Lstat(m.Path()); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	var stopErr error
	if m.loaded(ctx) {
		_, stopErr = m.Run(ctx, "launchctl", "bootout", m.service())
	}
	if err := os.Remove(m.Path()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	if stopErr != nil {
		return true, fmt.Errorf("removed %s, but stopping the agent failed: %w", m.Path(), stopErr)
	}
	return true, nil
}

// Status implements Manager, from the file and `launchctl print`.
func (m *Launchd) Status(ctx context.Context) (Status, error) {
	st := Status{Path: m.Path(), State: "not loaded"}
	b, err := readUnit(m.Path())
	if err != nil {
		return st, err
	}
	if b != nil {
		st.Installed = true
		st.Command, st.CommandErr = PlistProgramArguments(b)
	}
	out, err := m.Run(ctx, "launchctl", "print", m.service())
	if err != nil {
		return st, nil // not loaded
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "state = "); ok {
			st.State = v
			break
		}
	}
	return st, nil
}

// BootNote implements Manager: an agent starts at the user's login, never
// before; a daemon that starts at boot would run as root.
func (m *Launchd) BootNote(context.Context, string) string {
	return "a launchd agent starts when you log in (and keeps running until you log out), not at boot"
}
