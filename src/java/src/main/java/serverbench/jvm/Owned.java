package serverbench.jvm;

/**
 * A process's own buffers (the same rule as the Scala/Akka program's {@code Owned}). Under
 * copy the received bytes are copied into the next one and that one is sent on; under
 * share buffer 0 is always sent unchanged.
 *
 * <p>A buffer is rewritten only when the peer has provably finished copying out of it. In
 * pingping both sides send at once, so message k+1 reuses the buffer of message k-1, which
 * the peer copied before sending the message k just received (the hand-off, a blocking
 * queue or an actor mailbox, orders the peer's copy before our receive): two buffers, used
 * in turn. Not thread-safe: one process uses it.
 */
public final class Owned {
    final byte[][] bufs;
    private final boolean copy;
    private final byte marker;
    private int next;

    public Owned(int bytes, byte marker, int n, boolean copy) {
        this.bufs = new byte[n][];
        for (int i = 0; i < n; i++) {
            bufs[i] = Payload.build(bytes, marker);
        }
        this.copy = copy;
        this.marker = marker;
    }

    /** The first message a process sends: its buffer 0 as built. */
    public byte[] first() {
        next = 1 % bufs.length;
        return bufs[0];
    }

    /** What a process sends after receiving buf. */
    public byte[] reply(byte[] buf) {
        if (!copy) {
            return bufs[0];
        }
        byte[] into = bufs[next];
        next = (next + 1) % bufs.length;
        return Payload.copyInto(buf, into, marker);
    }

    /** Buffer i (tests). */
    public byte[] buffer(int i) {
        return bufs[i];
    }
}
