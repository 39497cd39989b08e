package serverbench

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

  /** One fresh allocation and B bytes moved, then the new sender's marker. The received
    * buffer is never written, so no buffer changes after it has been sent. */
  def copy(buf: Array[Byte], marker: Byte): Array[Byte] = {
    val c = java.util.Arrays.copyOf(buf, buf.length)
    c(0) = marker
    c
  }
}
