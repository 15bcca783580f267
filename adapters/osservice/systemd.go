package osservice

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SystemdUnit renders s as a systemd user unit.
//
// The service restarts on failure after RestartSec, except after exit
// status 2 (a usage error, which a restart cannot fix). KillMode=mixed
// sends the stop signal to the program alone, so it can end its own
// children in order; what is left is killed at the timeout. Its output
// goes to the journal.
//
// The hardening is what a user manager applies without privileges:
// NoNewPrivileges, UMask=0077 and three seccomp-based settings that
// NoNewPrivileges makes available to an unprivileged manager. The
// file-system ones (PrivateTmp, ProtectSystem, ProtectHome, …) need a
// mount namespace, which a user manager only gets inside a user namespace:
// systemd 253 and later then turn on PrivateUsers= for the unit, which
// shows every other user and group as nobody and fails the start where
// unprivileged user namespaces are off or confined (Debian before 11,
// Ubuntu 24.04's AppArmor restriction), while older versions ignore them
// silently. They are left out rather than promised and not kept.
func SystemdUnit(s Spec) ([]byte, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if strings.Contains(s.Program, "$") {
		// systemd expands variables in the arguments only; a '$' in the
		// path would be read differently by a reader (or a version) that
		// does not know it, so none is written.
		return nil, fmt.Errorf("osservice: the program's path %q holds a '$'", s.Program)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `# %s.service: a systemd user unit. It holds no secret.
[Unit]
Description=%s

[Service]
Type=exec
ExecStart=%s
`, s.Name, specifierEscape(s.Description), execLine(s.Program, s.Args))
	for _, e := range s.Env {
		fmt.Fprintf(&b, "Environment=%s\n", systemdQuote(e.Name+"="+e.Value, false))
	}
	b.WriteString(`Restart=on-failure
RestartSec=5s
RestartPreventExitStatus=2
KillMode=mixed
StandardOutput=journal
StandardError=journal
SyslogIdentifier=` + s.Name + `
NoNewPrivileges=yes
UMask=0077
LockPersonality=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes

[Install]
WantedBy=default.target
`)
	return b.Bytes(), nil
}

// execLine is the value of ExecStart= for program and args.
func execLine(program string, args []string) string {
	words := []string{systemdQuote(program, false)}
	for _, a := range args {
		words = append(words, systemdQuote(a, true))
	}
	return strings.Join(words, " ")
}

// systemdQuote quotes one word for a unit file: inside double quotes a
// backslash and a quote are escaped (systemd unescapes C escapes there),
// '%' doubles (specifiers are expanded in every word) and, in a command
// command's arguments, '$' doubles (variables are expanded there, not in
// the program's path, which may hold none: SystemdUnit refuses it).
// Control characters were refused by Spec.check.
func systemdQuote(v string, args bool) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range v {
		switch {
		case r == '\\' || r == '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '%':
			b.WriteString("%%")
		case r == '$' && args:
			b.WriteString("$$")
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// specifierEscape doubles '%' in an unquoted value such as Description=.
func specifierEscape(v string) string { return strings.ReplaceAll(v, "%", "%%") }

// ParseExecStart reads an ExecStart= value back into the program and its
// arguments as systemd would hand them over: words split at whitespace,
// double- or single-quoted parts unquoted, C escapes, "%%" and "$$"
// undone. It refuses what it cannot resolve without a service manager:
// any other specifier, a variable, a prefix such as '-' or '@', an escape
// it does not know.
func ParseExecStart(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	rs := []rune(line)
	// Variables are expanded in the arguments; the program's path takes
	// none, and a '$' there is refused as SystemdUnit refuses it.
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
			continue
		case r == '"' || r == '\'':
			inWord = true
			q := r
			closed := false
			for i++; i < len(rs); i++ {
				if rs[i] == q {
					closed = true
					break
				}
				if err := literal(rs, &i, &w, len(words) > 0); err != nil {
					return nil, err
				}
			}
			if !closed {
				return nil, errors.New("unbalanced quotes")
			}
		default:
			inWord = true
			if err := literal(rs, &i, &w, len(words) > 0); err != nil {
				return nil, err
			}
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	if len(words) == 0 {
		return nil, errors.New("no command")
	}
	if !filepath.IsAbs(words[0]) {
		return nil, fmt.Errorf("program %q is not an absolute path (a prefix or a search is not read back)", words[0])
	}
	return words, nil
}

// literal appends to w the character at rs[*i], resolving an escape, a
// specifier or (in an argument) a variable that starts there, and leaves
// *i on its last rune.
func literal(rs []rune, i *int, w *strings.Builder, arg bool) error {
	r := rs[*i]
	next := func() (rune, bool) {
		if *i+1 < len(rs) {
			*i++
			return rs[*i], true
		}
		return 0, false
	}
	switch r {
	case '\\':
		e, ok := next()
		if !ok {
			return errors.New("a trailing backslash")
		}
		switch e {
		case '\\', '"', '\'', ' ':
			w.WriteRune(e)
		case 's':
			w.WriteByte(' ')
		case 'n':
			w.WriteByte('\n')
		case 't':
			w.WriteByte('\t')
		default:
			return fmt.Errorf("the escape \\%c is not read back", e)
		}
	case '%':
		if e, ok := next(); !ok || e != '%' {
			return errors.New("a specifier other than %% is not read back")
		}
		w.WriteByte('%')
	case '$':
		if !arg {
			return errors.New("a '$' in the program's path is not read back")
		}
		if e, ok := next(); !ok || e != '$' {
			return errors.New("a variable is not read back")
		}
		w.WriteByte('$')
	default:
		w.WriteRune(r)
	}
	return nil
}

// Systemd installs a systemd user unit.
type Systemd struct {
	// Dir is the user unit directory (UserUnitDir).
	Dir string
	// Name is the unit's name without ".service".
	Name string
	// Run runs systemctl and loginctl.
	Run Runner
	// LingerDir is where logind marks lingering users; "" means
	// /var/lib/systemd/linger.
	LingerDir string
}

// UserUnitDir is where a user's own units go: $XDG_CONFIG_HOME/systemd/user,
// else ~/.config/systemd/user.
func UserUnitDir(getenv func(string) string) (string, error) {
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "systemd", "user"), nil
	}
	home := getenv("HOME")
	if !filepath.IsAbs(home) {
		return "", errors.New("no home directory: set HOME")
	}
	return filepath.Join(home, ".config", "systemd", "user"), nil
}

func (m *Systemd) unit() string { return m.Name + ".service" }

// Path implements Manager.
func (m *Systemd) Path() string { return filepath.Join(m.Dir, m.unit()) }

// Render implements Manager.
func (m *Systemd) Render(s Spec) ([]byte, error) { return SystemdUnit(s) }

func (m *Systemd) systemctl(ctx context.Context, args ...string) ([]byte, error) {
	return m.Run(ctx, "systemctl", append([]string{"--user"}, args...)...)
}

// Install implements Manager: daemon-reload, then enable --now, or enable
// and restart when a running service's unit was replaced.
func (m *Systemd) Install(ctx context.Context, unit []byte, force bool) (Outcome, error) {
	outcome, err := place(m.Path(), unit, force, nil)
	if err != nil {
		return 0, err
	}
	if err := m.start(ctx, outcome); err != nil {
		return outcome, &NotStartedError{Path: m.Path(), Err: err}
	}
	return outcome, nil
}

// start loads the unit file and starts the service, restarting it on a
// replaced unit.
func (m *Systemd) start(ctx context.Context, outcome Outcome) error {
	if _, err := m.systemctl(ctx, "daemon-reload"); err != nil {
		return err
	}
	if outcome == Replaced {
		if _, err := m.systemctl(ctx, "enable", m.unit()); err != nil {
			return err
		}
		_, err := m.systemctl(ctx, "restart", m.unit())
		return err
	}
	_, err := m.systemctl(ctx, "enable", "--now", m.unit())
	return err
}

// Uninstall implements Manager. The file is removed even when systemctl
// fails (no user manager to reach, say); the error then says so.
func (m *Systemd) Uninstall(ctx context.Context) (bool, error) {
	if _, err := os.Lstat(m.Path()); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	_, stopErr := m.systemctl(ctx, "disable", "--now", m.unit())
	if err := os.Remove(m.Path()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	if stopErr != nil {
		return true, fmt.Errorf("removed %s, but stopping the service failed: %w", m.Path(), stopErr)
	}
	// Forget a failed state so status no longer shows the unit.
	_, _ = m.systemctl(ctx, "reset-failed", m.unit())
	_, err := m.systemctl(ctx, "daemon-reload")
	return true, err
}

// Status implements Manager, from the file and `systemctl --user show`.
func (m *Systemd) Status(ctx context.Context) (Status, error) {
	st := Status{Path: m.Path()}
	b, err := readUnit(m.Path())
	if err != nil {
		return st, err
	}
	if b != nil {
		st.Installed = true
		st.Command, st.CommandErr = execStartOf(b)
	}
	out, err := m.systemctl(ctx, "show", m.unit(), "--property=ActiveState,SubState,UnitFileState")
	if err != nil {
		return st, err
	}
	p := properties(out)
	st.State = p["ActiveState"]
	if sub := p["SubState"]; sub != "" {
		st.State += " (" + sub + ")"
	}
	st.Enabled = p["UnitFileState"]
	return st, nil
}

// BootNote implements Manager: a user's services start at boot only when
// the user lingers; otherwise at their first login, and they stop at the
// last logout.
func (m *Systemd) BootNote(ctx context.Context, user string) string {
	if user == "" || m.lingers(ctx, user) {
		return ""
	}
	return "the service runs only while " + user + " is logged in; to start it at boot and keep it running, run once:\n" +
		"    sudo loginctl enable-linger " + user
}

// lingers asks logind, and falls back on its marker file when logind
// cannot be asked (no systemd running, as in a container).
func (m *Systemd) lingers(ctx context.Context, user string) bool {
	out, err := m.Run(ctx, "loginctl", "show-user", user, "--property=Linger")
	if err == nil {
		if v, ok := properties(out)["Linger"]; ok {
			return v == "yes"
		}
	}
	dir := m.LingerDir
	if dir == "" {
		dir = "/var/lib/systemd/linger"
	}
	_, err = os.Stat(filepath.Join(dir, user))
	return err == nil
}

// execStartOf reads the command back from a unit file.
func execStartOf(unit []byte) ([]string, error) {
	sc := bufio.NewScanner(bytes.NewReader(unit))
	sc.Buffer(nil, maxUnit)
	var cmd []string
	var err error = errors.New("no ExecStart= line")
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "ExecStart="); ok {
			cmd, err = ParseExecStart(v)
		}
	}
	return cmd, err
}

// properties parses systemctl's and loginctl's KEY=VALUE lines.
func properties(out []byte) map[string]string {
	p := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			p[k] = v
		}
	}
	return p
}
