//! The IRC lines the generator writes and reads (docs/im.md): nicks `c<index in base 36>`,
//! channels `#g<index in base 36>`, the timed PRIVMSG text `<seq> <scheduled_ns> <padding>`,
//! and a parser for the few parts of a received line it needs.

use std::io::Write;

/// `index` in base 36, lower case (0 -> "0").
pub fn base36(mut index: usize) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[index % 36]);
        index /= 36;
        if index == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).expect("ASCII digits")
}

/// The index a base-36 text names (ASCII case-insensitive: servers may fold nicks), or None.
pub fn parse_base36(text: &[u8]) -> Option<usize> {
    if text.is_empty() || text.len() > 12 {
        return None;
    }
    text.iter().try_fold(0usize, |acc, &b| {
        let d = (b as char).to_ascii_lowercase().to_digit(36)?;
        Some(acc * 36 + d as usize)
    })
}

pub fn nick(index: usize) -> String {
    format!("c{}", base36(index))
}

pub fn channel(index: usize) -> String {
    format!("#g{}", base36(index))
}

/// The client index of a nick this generator gave, or None.
pub fn nick_index(nick: &[u8]) -> Option<usize> {
    match nick.split_first() {
        Some((b'c' | b'C', rest)) => parse_base36(rest),
        _ => None,
    }
}

pub fn registration(index: usize) -> Vec<u8> {
    let n = nick(index);
    format!("NICK {n}\r\nUSER {n} 0 * :{n}\r\n").into_bytes()
}

/// Appends `PRIVMSG <target> :<seq> <scheduled_ns> <padding>\r\n` to out, the text padded
/// with 'x' up to payload_bytes (no padding when the numbers alone are as long).
pub fn write_timed(out: &mut Vec<u8>, target: &str, seq: u64, scheduled_ns: u64, payload_bytes: usize) {
    let start = out.len();
    write!(out, "PRIVMSG {target} :").expect("writing to a Vec");
    let text = out.len();
    write!(out, "{seq} {scheduled_ns}").expect("writing to a Vec");
    let used = out.len() - text;
    if used < payload_bytes {
        out.push(b' ');
        out.resize(out.len() + payload_bytes.saturating_sub(used + 1), b'x');
    }
    debug_assert!(out.len() - start <= 510);
    out.extend_from_slice(b"\r\n");
}

/// (seq, scheduled_ns) of a timed PRIVMSG text, or None if it is not one.
pub fn read_timed(text: &[u8]) -> Option<(u64, u64)> {
    let mut words = text.split(|&b| b == b' ');
    let num = |w: Option<&[u8]>| -> Option<u64> { std::str::from_utf8(w?).ok()?.parse().ok() };
    Some((num(words.next())?, num(words.next())?))
}

/// The parts of a received line the generator uses (CR LF already stripped).
#[derive(Debug, PartialEq)]
pub struct Line<'a> {
    /// the prefix's nick (before '!'), if the line has a prefix
    pub nick: Option<&'a [u8]>,
    pub command: &'a [u8],
    /// the first parameter (a PRIVMSG's target, a JOIN's channel, a numeric's client)
    pub first: Option<&'a [u8]>,
    /// the last parameter (after " :" or the last word)
    pub last: Option<&'a [u8]>,
}

impl Line<'_> {
    /// The three-digit numeric of a reply, or None.
    pub fn numeric(&self) -> Option<u16> {
        if self.command.len() == 3 && self.command.iter().all(u8::is_ascii_digit) {
            std::str::from_utf8(self.command).ok()?.parse().ok()
        } else {
            None
        }
    }
}

pub fn parse(line: &[u8]) -> Option<Line<'_>> {
    let mut rest = line;
    let mut nick = None;
    if let Some(p) = rest.strip_prefix(b":") {
        let end = p.iter().position(|&b| b == b' ')?;
        let prefix = &p[..end];
        nick = Some(prefix.split(|&b| b == b'!').next().unwrap_or(prefix));
        rest = &p[end + 1..];
    }
    let (head, trailing) = match find(rest, b" :") {
        Some(i) => (&rest[..i], Some(&rest[i + 2..])),
        None => (rest, None),
    };
    let mut words = head.split(|&b| b == b' ').filter(|w| !w.is_empty());
    let command = words.next()?;
    let first_middle = words.next();
    let last_middle = words.next_back().or(first_middle);
    let first = first_middle.or(trailing);
    let last = trailing.or(last_middle);
    Some(Line {
        nick,
        command,
        first,
        last,
    })
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nicks_round_trip_and_fit_nine_characters() {
        for i in [0usize, 1, 35, 36, 19_999, 65_535, 2_000_000] {
            assert_eq!(nick_index(nick(i).as_bytes()), Some(i));
            assert!(nick(i).len() <= 9);
        }
        assert_eq!(nick(36), "c10");
        assert_eq!(nick_index(b"C1Z"), Some(71));
        assert_eq!(nick_index(b"x1"), None);
        assert_eq!(channel(11), "#gb");
    }

    #[test]
    fn timed_text_is_padded_to_the_payload_and_read_back() {
        let mut out = Vec::new();
        write_timed(&mut out, "c1", 7, 123_456_789, 64);
        let text = std::str::from_utf8(&out).unwrap();
        assert!(text.starts_with("PRIVMSG c1 :7 123456789 xxx") && text.ends_with("x\r\n"));
        let body = &out["PRIVMSG c1 :".len()..out.len() - 2];
        assert_eq!(body.len(), 64);
        assert_eq!(read_timed(body), Some((7, 123_456_789)));
        let mut short = Vec::new();
        write_timed(&mut short, "c1", 12_345, 1_000_000_000_000, 8);
        assert_eq!(short, b"PRIVMSG c1 :12345 1000000000000\r\n");
        assert_eq!(read_timed(b"hello world"), None);
    }

    #[test]
    fn lines_give_nick_command_and_parameters() {
        let l = parse(b":c1!c1@127.0.0.1 PRIVMSG c0 :3 99 xx").unwrap();
        assert_eq!(
            (l.nick, l.command, l.first, l.last),
            (
                Some(&b"c1"[..]),
                &b"PRIVMSG"[..],
                Some(&b"c0"[..]),
                Some(&b"3 99 xx"[..])
            )
        );
        let l = parse(b"PING :irc.serverbench").unwrap();
        assert_eq!(
            (l.nick, l.command, l.last),
            (None, &b"PING"[..], Some(&b"irc.serverbench"[..]))
        );
        let l = parse(b":irc.example 001 c5 :Welcome").unwrap();
        assert_eq!((l.numeric(), l.first), (Some(1), Some(&b"c5"[..])));
        let l = parse(b":c2!u@h JOIN #g0").unwrap();
        assert_eq!((l.command, l.first), (&b"JOIN"[..], Some(&b"#g0"[..])));
        assert_eq!(parse(b":only-prefix"), None);
    }
}
