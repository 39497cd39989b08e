//! One client connection: a non-blocking socket registered with the poll (edge-triggered,
//! so writes go on until the kernel says WouldBlock and reads until the socket is drained),
//! a buffer of what is still to be written and one of the partial line read so far.

use mio::net::TcpStream;
use std::io::{self, Read, Write};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum State {
    Connecting,
    Registering,
    Registered,
    Closed,
}

pub struct Conn {
    pub stream: TcpStream,
    pub state: State,
    pub joined: bool,
    pending: Vec<u8>,
    written: usize,
    partial: Vec<u8>,
}

impl Conn {
    pub fn new(stream: TcpStream) -> Conn {
        Conn {
            stream,
            state: State::Connecting,
            joined: false,
            pending: Vec::new(),
            written: 0,
            partial: Vec::new(),
        }
    }

    /// Queues bytes and writes what the socket takes now.
    pub fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.pending.extend_from_slice(bytes);
        self.flush()
    }

    /// Queues a line built in place by `build` (appending to the buffer); `flush` writes it.
    pub fn queue_with(&mut self, build: impl FnOnce(&mut Vec<u8>)) {
        build(&mut self.pending);
    }

    /// Writes queued bytes until done or WouldBlock (then the next writable event goes on).
    pub fn flush(&mut self) -> io::Result<()> {
        while self.written < self.pending.len() {
            match self.stream.write(&self.pending[self.written..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.pending.clear();
        self.written = 0;
        Ok(())
    }

    /// Reads everything the socket has into `scratch`'s growing tail; calls `line` on every
    /// complete line (CR LF or LF stripped); keeps an incomplete one for the next read.
    /// Returns Ok(false) at end of stream.
    pub fn read_lines(&mut self, scratch: &mut [u8], mut line: impl FnMut(&[u8])) -> io::Result<bool> {
        loop {
            let n = match self.stream.read(scratch) {
                Ok(0) => return Ok(false),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(true),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let mut data = &scratch[..n];
            if !self.partial.is_empty() {
                // finish the line started in an earlier read
                let Some(i) = data.iter().position(|&b| b == b'\n') else {
                    self.partial.extend_from_slice(data);
                    continue;
                };
                self.partial.extend_from_slice(&data[..=i]);
                let whole = std::mem::take(&mut self.partial);
                line(trim(&whole));
                self.partial = whole;
                self.partial.clear();
                data = &data[i + 1..];
            }
            while let Some(i) = data.iter().position(|&b| b == b'\n') {
                line(trim(&data[..=i]));
                data = &data[i + 1..];
            }
            self.partial.extend_from_slice(data);
            if n < scratch.len() {
                // the socket had less than a buffer: it is drained, and data (or the end of
                // the stream) arriving later is a new edge, so the read that would only say
                // WouldBlock is saved (one system call per wake-up)
                return Ok(true);
            }
        }
    }
}

fn trim(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}
