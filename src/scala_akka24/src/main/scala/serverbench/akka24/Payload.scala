package serverbench.akka24

/** Message buffers (docs/spec.md "Messages and markers"): byte 0 is the sender's marker,
  * byte i (i >= 1) is i mod 256, written once before the clock starts. */
object Payload {
  // spec/cli.json "markers"; a test checks these against the file.
  val PingA: Byte = 65
  val PingB: Byte = 66
  val Server: Byte = 83
  val Client: Byte = 67

  def build(bytes: Int, marker: Byte): Array[Byte] = {
    val a = new Array[Byte](bytes)
    var i = 1
    while (i < bytes) { a(i) = i.toByte; i += 1 } // toByte keeps i mod 256
    a(0) = marker
    a
  }

  /** The receiver's check: length, the peer's marker, and the last byte when B >= 2. */
  def check(buf: Array[Byte], bytes: Int, peerMarker: Byte): Boolean =
    buf != null && buf.length == bytes && buf(0) == peerMarker &&
      (bytes < 2 || buf(bytes - 1) == (bytes - 1).toByte)

  /** Copy the B bytes received into `into` (a buffer the receiver owns; no allocation),
    * then write the receiver's marker: "the receiver copies into its own buffer". */
  def copyInto(buf: Array[Byte], into: Array[Byte], marker: Byte): Array[Byte] = {
    System.arraycopy(buf, 0, into, 0, math.min(buf.length, into.length)) // a short buf was already counted by check
    into(0) = marker
    into
  }
}

/** A process's own buffers. Under copy the received bytes are copied into the next one
  * and that one is sent on; under share buffer 0 is always sent unchanged.
  *
  * A buffer is rewritten only when the peer has provably finished copying out of it
  * (the actor send rule orders the peer's copy before our receive of its next message).
  * In throughput one message is in flight per pair, so one buffer is enough. In pingping
  * both sides send at once, so message k+1 reuses the buffer of message k-1, which the
  * peer copied before sending the message k just received: two buffers, used in turn. */
final class Owned(bytes: Int, marker: Byte, n: Int, copy: Boolean) {
  private[serverbench] val bufs: Array[Array[Byte]] = Array.fill(n)(Payload.build(bytes, marker))
  private var next = 0

  /** The first message a process sends: its buffer 0 as built. */
  def first(): Array[Byte] = { next = 1 % n; bufs(0) }

  /** What a process sends after receiving buf. */
  def reply(buf: Array[Byte]): Array[Byte] =
    if (!copy) bufs(0)
    else {
      val into = bufs(next)
      next = (next + 1) % n
      Payload.copyInto(buf, into, marker)
    }
}
