package gitcmd

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// ErrBadConfig marks a repository config that gitcmd will not pass on:
// malformed as git reads it (git itself would refuse to run), holding a
// NUL byte, or larger than MaxConfigBytes.
var ErrBadConfig = errors.New("unusable repository config")

// configEntry is one entry of a git config file, in file order.
type configEntry struct {
	// key is the full name as git reports it: section and name lower
	// case, the subsection as written ("remote.Origin.url").
	key string
	// value is the value after git's unquoting; bare is set for a name
	// given without "=", which git reads as true (unlike "name =", the
	// empty string).
	value string
	bare  bool
}

// parts splits the key into section, subsection and name; hasSub reports
// a subsection (possibly empty, as in [section ""]).
func (s configEntry) parts() (section, sub, name string, hasSub bool) {
	first, last := strings.IndexByte(s.key, '.'), strings.LastIndexByte(s.key, '.')
	if first < 0 {
		return "", "", s.key, false
	}
	if first == last {
		return s.key[:first], "", s.key[last+1:], false
	}
	return s.key[:first], s.key[first+1 : last], s.key[last+1:], true
}

// parseConfig reads a config file as git's parser does (config.c,
// parse_file), without following includes: an include is an entry like
// any other. Where git would die on the file, it fails; a file with a NUL
// byte, which git reads as a truncated string, fails too.
func parseConfig(b []byte) ([]configEntry, error) {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return nil, fmt.Errorf("%w: a NUL byte at offset %d", ErrBadConfig, i)
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	p := &configParser{b: b, line: 1}
	var out []configEntry
	var section string // "section." or "section.sub." or "" before a header
	for {
		c := p.next()
		switch {
		case c == '\n' && p.eof:
			return out, nil
		case c == '\n':
			continue
		case isSpace(c):
			continue
		case c == '#' || c == ';':
			p.skipLine()
			continue
		case c == '[':
			s, ok := p.header()
			if !ok || s == "" {
				return nil, p.fail()
			}
			section = s + "."
			continue
		case !isAlpha(c):
			return nil, p.fail()
		}
		s, ok := p.entry(section, c)
		if !ok {
			return nil, p.fail()
		}
		out = append(out, s)
	}
}

// configParser walks a config file's bytes, turning CRLF into LF and the
// end of the file into a final '\n' with eof set, as git's get_next_char.
type configParser struct {
	b    []byte
	i    int
	eof  bool
	line int
}

func (p *configParser) next() byte {
	if p.i >= len(p.b) {
		p.eof = true
		return '\n'
	}
	c := p.b[p.i]
	p.i++
	if c == '\r' && p.i < len(p.b) && p.b[p.i] == '\n' {
		p.i++
		c = '\n'
	}
	if c == '\n' {
		p.line++
	}
	return c
}

func (p *configParser) fail() error {
	return fmt.Errorf("%w: bad config line %d", ErrBadConfig, p.line)
}

func (p *configParser) skipLine() {
	for c := p.next(); c != '\n'; c = p.next() {
	}
}

// header reads a section header after its '[': "[name]", the legacy
// "[name.sub]" (lower-cased whole) or "[name "sub"]".
func (p *configParser) header() (string, bool) {
	var name []byte
	for {
		c := p.next()
		switch {
		case p.eof:
			return "", false
		case c == ']':
			return string(name), true
		case isSpace(c):
			return p.quotedSub(name, c)
		case !isKeyChar(c) && c != '.':
			return "", false
		}
		name = append(name, toLower(c))
	}
}

// quotedSub reads ` "sub"]` after a section name; c is the space that
// ended the name.
func (p *configParser) quotedSub(name []byte, c byte) (string, bool) {
	for isSpace(c) {
		if c == '\n' {
			return "", false
		}
		c = p.next()
	}
	if c != '"' {
		return "", false
	}
	name = append(name, '.')
	for {
		c := p.next()
		if c == '\n' {
			return "", false
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c = p.next(); c == '\n' {
				return "", false
			}
		}
		name = append(name, c)
	}
	return string(name), p.next() == ']'
}

// entry reads "name [= value]" whose first letter is c, up to and
// including its line's end.
func (p *configParser) entry(section string, c byte) (configEntry, bool) {
	name := []byte{toLower(c)}
	for {
		c = p.next()
		if p.eof || !isKeyChar(c) {
			break
		}
		name = append(name, toLower(c))
	}
	for c == ' ' || c == '\t' {
		c = p.next()
	}
	s := configEntry{key: section + string(name)}
	if c == '\n' {
		s.bare = true
		return s, true
	}
	if c != '=' {
		return configEntry{}, false
	}
	v, ok := p.value()
	s.value = v
	return s, ok
}

// value reads a value after its '=' as git's parse_value: unquoted
// whitespace runs become spaces and are trimmed at both ends, '#' and ';'
// outside quotes start a comment, and \t \b \n \\ \" and a
// backslash-newline are the only escapes.
func (p *configParser) value() (string, bool) {
	var v []byte
	quote, comment, spaces := false, false, 0
	for {
		c := p.next()
		if c == '\n' {
			return string(v), !quote
		}
		if comment {
			continue
		}
		if isSpace(c) && !quote {
			if len(v) > 0 {
				spaces++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; spaces > 0; spaces-- {
			v = append(v, ' ')
		}
		switch c {
		case '\\':
			switch c = p.next(); c {
			case '\n':
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", false
			}
			v = append(v, c)
		case '"':
			quote = !quote
		default:
			v = append(v, c)
		}
	}
}

// git's own ctype: ASCII only, and its space is " \t\n\r" (not \v nor \f).
func isSpace(c byte) bool   { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isAlpha(c byte) bool   { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isKeyChar(c byte) bool { return isAlpha(c) || '0' <= c && c <= '9' || c == '-' }
func toLower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// writeConfig writes settings as a config file git reads back as exactly
// these settings, in this order: one header per run of a section, every
// value quoted and escaped. Keys come from parseConfig; one without a
// section (git takes one before the first header) is left out, as keep
// leaves it out.
func writeConfig(settings []configEntry) []byte {
	var b bytes.Buffer
	open, started := "", false
	for _, s := range settings {
		section, sub, name, hasSub := s.parts()
		if section == "" && !hasSub {
			continue
		}
		head := section
		if hasSub {
			head += "\x00" + sub
		}
		if !started || head != open {
			open, started = head, true
			if hasSub {
				fmt.Fprintf(&b, "[%s \"%s\"]\n", section, escape(sub, false))
			} else {
				fmt.Fprintf(&b, "[%s]\n", section)
			}
		}
		if s.bare {
			fmt.Fprintf(&b, "\t%s\n", name)
			continue
		}
		fmt.Fprintf(&b, "\t%s = \"%s\"\n", name, escape(s.value, true))
	}
	return b.Bytes()
}

// escape quotes s for a quoted value (or subsection): backslash and
// double quote always, and in values the control characters git's value
// parser would not keep literally.
func escape(s string, value bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' || c == '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case value && c == '\n':
			b.WriteString(`\n`)
		case value && c == '\t':
			b.WriteString(`\t`)
		case value && c == '\b':
			b.WriteString(`\b`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
