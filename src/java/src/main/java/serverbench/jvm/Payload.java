package serverbench.jvm;

/**
 * Message buffers (docs/spec.md "Messages and markers"): byte 0 is the sender's marker,
 * byte i (i >= 1) is i mod 256, written once before the clock starts. The markers are
 * spec/cli.json {@code markers}.
 */
public final class Payload {
    public static final byte PING_A = (byte) Spec.builtIn().marker("pingping_a");
    public static final byte PING_B = (byte) Spec.builtIn().marker("pingping_b");
    public static final byte SERVER = (byte) Spec.builtIn().marker("throughput_server");
    public static final byte CLIENT = (byte) Spec.builtIn().marker("throughput_client");

    private Payload() {}

    public static byte[] build(int bytes, byte marker) {
        byte[] a = new byte[bytes];
        for (int i = 1; i < bytes; i++) {
            a[i] = (byte) i; // keeps i mod 256
        }
        a[0] = marker;
        return a;
    }

    /** The receiver's check: length, the peer's marker, and the last byte when B >= 2. */
    public static boolean check(byte[] buf, int bytes, byte peerMarker) {
        return buf != null && buf.length == bytes && buf[0] == peerMarker
            && (bytes < 2 || buf[bytes - 1] == (byte) (bytes - 1));
    }

    /**
     * Copies the B bytes received into {@code into} (a buffer the receiver owns; no
     * allocation), then writes the receiver's marker: "the receiver copies into its own
     * buffer".
     */
    public static byte[] copyInto(byte[] buf, byte[] into, byte marker) {
        System.arraycopy(buf, 0, into, 0, Math.min(buf.length, into.length)); // a short buf was already counted by check
        into[0] = marker;
        return into;
    }
}
