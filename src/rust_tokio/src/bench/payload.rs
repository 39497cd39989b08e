//! Messages, the receive check and the reply (docs/spec.md "Messages and markers").
//!
//! A message is an `Arc<[u8]>`: sending one moves a pointer, as a Go slice or a JVM array
//! reference does. Under copy the receiver copies the B bytes into a buffer it owns (built
//! before the clock, so no hop allocates), stamps its marker and sends that buffer on. A
//! buffer is rewritten only once the peer has dropped its reference, which it does right
//! after copying out of it (before its own send): `Arc::get_mut` then succeeds, and the
//! Arc's counter orders the peer's reads before our writes. In throughput one message is
//! in flight per pair, so one buffer each; in pingping both sides send at once, so
//! message k+1 reuses the buffer of message k-1: two buffers, used in turn.

use std::sync::Arc;

pub type Msg = Arc<[u8]>;

/// A message of b bytes: byte 0 the sender's marker, byte i holds i mod 256.
pub fn new_buffer(b: usize, marker: u8) -> Msg {
    let mut v: Vec<u8> = (0..b).map(|i| i as u8).collect();
    if b > 0 {
        v[0] = marker;
    }
    v.into()
}

/// Length b, byte 0 the peer's marker and, when b >= 2, the last byte (b-1) mod 256.
#[inline]
pub fn check_message(m: &[u8], b: usize, peer: u8) -> bool {
    if m.len() != b || b == 0 || m[0] != peer {
        return false;
    }
    b < 2 || m[b - 1] == (b - 1) as u8
}

/// A process's own buffers (see the module comment).
pub struct Owned {
    bufs: Vec<Msg>,
    next: usize,
    copy_in: bool,
    marker: u8,
    /// replies that found their buffer still referenced and had to allocate (never
    /// expected: the tests assert 0)
    pub fallback_allocations: u64,
}

impl Owned {
    pub fn new(b: usize, marker: u8, n: usize, copy_in: bool) -> Self {
        let bufs = (0..n).map(|_| new_buffer(b, marker)).collect();
        Owned {
            bufs,
            next: 0,
            copy_in,
            marker,
            fallback_allocations: 0,
        }
    }

    /// The first message a process sends: its buffer 0 as built.
    pub fn first(&mut self) -> Msg {
        self.next = 1 % self.bufs.len();
        self.bufs[0].clone()
    }

    /// What a process sends after receiving m (m is dropped here, after the copy).
    #[inline]
    pub fn reply(&mut self, m: Msg) -> Msg {
        if !self.copy_in {
            return self.bufs[0].clone();
        }
        let i = self.next;
        self.next = (self.next + 1) % self.bufs.len();
        let marker = self.marker;
        if Arc::get_mut(&mut self.bufs[i]).is_none() {
            self.fallback_allocations += 1;
            self.bufs[i] = vec![0u8; self.bufs[i].len()].into();
        }
        let c = Arc::get_mut(&mut self.bufs[i]).expect("sole owner");
        let n = c.len().min(m.len()); // a short m was already counted as a payload error
        c[..n].copy_from_slice(&m[..n]);
        if !c.is_empty() {
            c[0] = marker;
        }
        drop(m);
        self.bufs[i].clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_and_check() {
        let m = new_buffer(300, 65);
        assert_eq!((m[0], m[1], m[255], m[256], m[299]), (65, 1, 255, 0, 43));
        assert!(check_message(&m, 300, 65));
        assert!(!check_message(&m, 300, 66));
        assert!(!check_message(&m[..299], 300, 65));
        let mut bad = m.to_vec();
        bad[299] = 0;
        assert!(!check_message(&bad, 300, 65));
        assert!(check_message(&new_buffer(1, 7), 1, 7));
    }

    #[test]
    fn copy_reply_moves_bytes_into_own_buffer() {
        let mut a = Owned::new(10, 65, 2, true);
        let mut b = Owned::new(10, 66, 2, true);
        let m1 = a.first();
        let r1 = b.reply(m1.clone());
        assert_eq!(r1[0], 66);
        assert_eq!(&r1[1..], &m1[1..]);
        assert!(!Arc::ptr_eq(&r1, &m1));
        // share: the own buffer, unchanged
        let mut s = Owned::new(10, 67, 1, false);
        let first = s.first();
        assert!(Arc::ptr_eq(&s.reply(r1), &first));
    }
}
