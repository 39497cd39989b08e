package serverbench.jvm;

/**
 * What a pingping implementation hands back: the time between the start signal and both
 * sides having received R messages, and what each side counted.
 */
public final class PingPingResult {
    public final long elapsedNs;
    public final long receivedA;
    public final long receivedB;
    public final long payloadErrors;

    public PingPingResult(long elapsedNs, long receivedA, long receivedB, long payloadErrors) {
        this.elapsedNs = elapsedNs;
        this.receivedA = receivedA;
        this.receivedB = receivedB;
        this.payloadErrors = payloadErrors;
    }
}
