//! The wire format of the IRC subset (docs/im.md): parsing a line, checking nicks and
//! channel names, writing replies.

use serde_json::Value;

/// Every client's host in its prefix: clients are on loopback.
pub const CLIENT_HOST: &str = "127.0.0.1";
/// RFC 2812 allows 14 middle parameters and a trailing one.
const MAX_PARAMS: usize = 15;

/// The part of the subset spec/cli.json fixes (benchmarks.im): the server's name and the
/// limits on lines (CRLF included), nicks and channel names.
#[derive(Clone, Debug)]
pub struct Protocol {
    pub server_name: String,
    pub line_max_bytes: usize,
    pub nick_max_chars: usize,
    pub channel_max_chars: usize,
}

impl Protocol {
    /// Reads benchmarks.im of the built-in spec; Err names what is missing.
    pub fn from_spec(spec: &Value) -> Result<Protocol, String> {
        let im = &spec["benchmarks"]["im"];
        let n = |k: &str| im[k].as_u64().map(|v| v as usize);
        match (
            im["server_name"].as_str(),
            n("line_max_bytes"),
            n("nick_max_chars"),
            n("channel_max_chars"),
        ) {
            (Some(name), Some(line), Some(nick), Some(chan)) if line > 2 && nick >= 1 && chan >= 2 => Ok(Protocol {
                server_name: name.to_string(),
                line_max_bytes: line,
                nick_max_chars: nick,
                channel_max_chars: chan,
            }),
            _ => Err(
                "cli.json benchmarks.im lacks server_name, line_max_bytes, nick_max_chars or channel_max_chars".into(),
            ),
        }
    }

    /// 1 to nick_max_chars characters: a letter or special first, then letters, digits,
    /// specials and '-'.
    pub fn valid_nick(&self, n: &str) -> bool {
        let b = n.as_bytes();
        !b.is_empty()
            && b.len() <= self.nick_max_chars
            && (b[0].is_ascii_alphabetic() || is_special(b[0]))
            && b[1..]
                .iter()
                .all(|&c| c.is_ascii_alphanumeric() || is_special(c) || c == b'-')
    }

    /// '#' first, at most channel_max_chars characters, none of space, comma, BEL, NUL,
    /// CR or LF.
    pub fn valid_channel(&self, c: &str) -> bool {
        c.len() >= 2
            && c.len() <= self.channel_max_chars
            && c.starts_with('#')
            && !c.bytes().any(|b| matches!(b, b' ' | b',' | 7 | 0 | b'\r' | b'\n'))
    }

    /// ":server NNN target params..." with CRLF; the last parameter is a trailing one.
    pub fn numeric(&self, code: u16, target: &str, params: &[&str]) -> Vec<u8> {
        let mut s = format!(":{} {code:03} {target}", self.server_name);
        for (i, p) in params.iter().enumerate() {
            s.push(' ');
            if i + 1 == params.len() {
                s.push(':');
            }
            s.push_str(p);
        }
        s.push_str("\r\n");
        s.into_bytes()
    }
}

fn is_special(b: u8) -> bool {
    b"[]\\`_^{|}".contains(&b)
}

/// The case-insensitive key of a nick or channel name (ASCII).
pub fn fold(s: &str) -> String {
    s.to_ascii_lowercase()
}

/// One parsed line: the command upper-cased, its parameters with the trailing one's colon
/// removed.
#[derive(Debug, PartialEq)]
pub struct Message {
    pub cmd: String,
    pub params: Vec<String>,
}

/// Parses a line without its line ending. None for a line with no command (a prefix
/// alone); an empty line gives cmd "" (ignored).
pub fn parse(line: &str) -> Option<Message> {
    let mut s = line.trim_start_matches(' ');
    let mut m = Message {
        cmd: String::new(),
        params: Vec::new(),
    };
    if s.is_empty() {
        return Some(m);
    }
    if s.starts_with(':') {
        // a client's prefix is ignored, as ircds do
        s = s.find(' ').map(|i| s[i..].trim_start_matches(' '))?;
        if s.is_empty() {
            return None;
        }
    }
    let mut first = true;
    while !s.is_empty() {
        if !first && (s.starts_with(':') || m.params.len() == MAX_PARAMS - 1) {
            m.params.push(s.strip_prefix(':').unwrap_or(s).to_string());
            break;
        }
        let (tok, rest) = match s.find(' ') {
            Some(i) => (&s[..i], s[i..].trim_start_matches(' ')),
            None => (s, ""),
        };
        s = rest;
        if first {
            m.cmd = tok.to_ascii_uppercase();
            first = false;
        } else {
            m.params.push(tok.to_string());
        }
    }
    Some(m)
}

/// ":prefix COMMAND middle... [:trailing]" with CRLF.
pub fn from_user(prefix: &str, cmd: &str, middle: &[&str], trailing: Option<&str>) -> Vec<u8> {
    let mut s = String::with_capacity(prefix.len() + cmd.len() + trailing.map_or(0, str::len) + 32);
    s.push(':');
    s.push_str(prefix);
    s.push(' ');
    s.push_str(cmd);
    for m in middle {
        s.push(' ');
        s.push_str(m);
    }
    if let Some(t) = trailing {
        s.push_str(" :");
        s.push_str(t);
    }
    s.push_str("\r\n");
    s.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> Protocol {
        Protocol::from_spec(&crate::cli::spec()).expect("benchmarks.im in cli.json")
    }

    #[test]
    fn parses_lines() {
        let m = parse("privmsg a :b c").unwrap();
        assert_eq!(
            (m.cmd.as_str(), m.params),
            ("PRIVMSG", vec!["a".to_string(), "b c".to_string()])
        );
        assert_eq!(parse(":pre NICK  x").unwrap().params, vec!["x"]);
        assert_eq!(parse(":pre"), None);
        assert_eq!(parse("   ").unwrap().cmd, "");
        assert_eq!(parse("PRIVMSG a ::x").unwrap().params, vec!["a", ":x"]);
        let many = parse("A 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16").unwrap().params;
        assert_eq!((many.len(), many[14].as_str()), (15, "15 16"));
    }

    #[test]
    fn checks_nicks_and_channels() {
        let p = p();
        for (n, ok) in [
            ("a", true),
            ("[x]-1", true),
            ("abcdefghi", true),
            ("abcdefghij", false),
            ("1a", false),
            ("-a", false),
        ] {
            assert_eq!(p.valid_nick(n), ok, "{n}");
        }
        assert!(!p.valid_nick(""), "an empty nick");
        assert!(p.valid_channel("#a") && !p.valid_channel("#") && !p.valid_channel("a") && !p.valid_channel("#a,b"));
        assert_eq!(p.numeric(1, "n", &["Welcome"]), b":irc.serverbench 001 n :Welcome\r\n");
    }
}
