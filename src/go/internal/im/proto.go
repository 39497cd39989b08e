// Package im is the IRC-subset instant-messaging server of the im benchmark
// (docs/im.md): a goroutine pair per connection, a session goroutine per
// one-to-one conversation found through a registry keyed by the unordered nick
// pair, a goroutine per channel doing its fan-out, a mutex-guarded nick
// registry, and a supervising goroutine that restarts sessions the chaos
// monkey kills. This file is the wire format: parsing a line and writing the
// replies.
package im

import (
	"strconv"
	"strings"
)

const (
	// ClientHost is every client's host in its prefix: clients are on loopback.
	ClientHost = "127.0.0.1"
	// maxParams: RFC 2812 allows 14 middle parameters and a trailing one.
	maxParams = 15
)

// Protocol is the part of the subset spec/cli.json fixes (benchmarks.im):
// the server's name and the limits on lines, nicks and channel names.
type Protocol struct {
	ServerName      string `json:"server_name"`
	LineMaxBytes    int    `json:"line_max_bytes"` // CRLF included
	NickMaxChars    int    `json:"nick_max_chars"`
	ChannelMaxChars int    `json:"channel_max_chars"`
}

// message is one parsed line: the command upper-cased, its parameters with the
// trailing one's colon removed.
type message struct {
	cmd    string
	params []string
}

// parse reads one line without its line ending. ok is false for a line with
// no command (a prefix alone); an empty line is ok with cmd "" (ignored).
func parse(line string) (m message, ok bool) {
	s := strings.TrimLeft(line, " ")
	if s == "" {
		return m, true
	}
	if s[0] == ':' { // a client's prefix is ignored, as ircds do
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			return m, false
		}
		s = strings.TrimLeft(s[i:], " ")
		if s == "" {
			return m, false
		}
	}
	first := true
	for s != "" {
		if !first && (s[0] == ':' || len(m.params) == maxParams-1) {
			m.params = append(m.params, strings.TrimPrefix(s, ":"))
			break
		}
		tok := s
		if i := strings.IndexByte(s, ' '); i >= 0 {
			tok, s = s[:i], strings.TrimLeft(s[i:], " ")
		} else {
			s = ""
		}
		if first {
			m.cmd, first = strings.ToUpper(tok), false
		} else {
			m.params = append(m.params, tok)
		}
	}
	return m, true
}

func isLetter(b byte) bool  { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }
func isDigit(b byte) bool   { return b >= '0' && b <= '9' }
func isSpecial(b byte) bool { return strings.IndexByte("[]\\`_^{|}", b) >= 0 }

// validNick: 1 to NickMaxChars characters, a letter or special first, then letters, digits,
// specials and '-'.
func (p *Protocol) validNick(n string) bool {
	if n == "" || len(n) > p.NickMaxChars || !(isLetter(n[0]) || isSpecial(n[0])) {
		return false
	}
	for i := 1; i < len(n); i++ {
		if b := n[i]; !(isLetter(b) || isDigit(b) || isSpecial(b) || b == '-') {
			return false
		}
	}
	return true
}

// validChannel: '#' first, at most ChannelMaxChars characters, none of space, comma, BEL,
// NUL, CR or LF.
func (p *Protocol) validChannel(c string) bool {
	return len(c) >= 2 && len(c) <= p.ChannelMaxChars && c[0] == '#' && !strings.ContainsAny(c, " ,\x07\x00\r\n")
}

// fold is the case-insensitive key of a nick or channel name (ASCII).
func fold(s string) string {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b >= 'A' && b <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// numeric formats ":irc.serverbench NNN target params..." with CRLF; the last
// parameter is sent as a trailing one (with its colon).
func (p *Protocol) numeric(code int, target string, params ...string) []byte {
	b := make([]byte, 0, 64)
	b = append(b, ':')
	b = append(b, p.ServerName...)
	b = append(b, ' ')
	if code < 100 { // numerics have three digits: 001
		b = append(b, '0')
	}
	if code < 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, ' ')
	b = append(b, target...)
	for i, p := range params {
		b = append(b, ' ')
		if i == len(params)-1 {
			b = append(b, ':')
		}
		b = append(b, p...)
	}
	return append(b, '\r', '\n')
}

// fromUser formats ":prefix COMMAND middle... :trailing" with CRLF; trailing
// (with its colon) is added when withTrailing.
func fromUser(prefix, cmd string, middle []string, trailing string, withTrailing bool) []byte {
	n := len(prefix) + len(cmd) + len(trailing) + 8
	for _, m := range middle {
		n += len(m) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, ':')
	b = append(b, prefix...)
	b = append(b, ' ')
	b = append(b, cmd...)
	for _, m := range middle {
		b = append(b, ' ')
		b = append(b, m...)
	}
	if withTrailing {
		b = append(b, ' ', ':')
		b = append(b, trailing...)
	}
	return append(b, '\r', '\n')
}
