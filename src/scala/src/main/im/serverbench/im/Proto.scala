package serverbench.im

import java.nio.charset.StandardCharsets.UTF_8

import serverbench.Rt.ByteString

/** The im benchmark's wire format (docs/im.md): parsing one IRC line, the nick and channel
  * rules, numerics and relayed lines, and cutting a connection's bytes into lines of at most
  * Limits.lineMaxBytes (CRLF included). Pure; the limits come from spec/cli.json. */
final case class Limits(serverName: String, lineMaxBytes: Int, nickMaxChars: Int, channelMaxChars: Int)

final case class Message(command: String, params: Vector[String])

object Proto {
  /** RFC 2812: at most 14 middle parameters and a trailing one. */
  val MaxParams = 15

  /** None for a line with a prefix alone; an empty line is a Message with an empty command and no parameters. */
  def parse(line: String): Option[Message] = {
    var s = line.dropWhile(_ == ' ')
    if (s.isEmpty) return Some(Message(command = "", params = Vector.empty))
    if (s.charAt(0) == ':') {
      val i = s.indexOf(' ')
      if (i < 0) return None
      s = s.substring(i).dropWhile(_ == ' ')
      if (s.isEmpty) return None
    }
    val params = Vector.newBuilder[String]
    var n = 0
    var command: String = null
    while (s.nonEmpty) {
      if (command != null && (s.charAt(0) == ':' || n == MaxParams - 1)) {
        params += (if (s.charAt(0) == ':') s.substring(1) else s)
        s = ""
      } else {
        val i = s.indexOf(' ')
        val tok = if (i < 0) s else s.substring(0, i)
        s = if (i < 0) "" else s.substring(i).dropWhile(_ == ' ')
        if (command == null) command = tok.toUpperCase(java.util.Locale.ROOT)
        else { params += tok; n += 1 }
      }
    }
    Some(Message(command, params.result()))
  }

  private def letter(c: Char) = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
  private def digit(c: Char) = c >= '0' && c <= '9'
  private def special(c: Char) = "[]\\`_^{|}".indexOf(c) >= 0

  def validNick(n: String, l: Limits): Boolean =
    n.nonEmpty && n.length <= l.nickMaxChars && (letter(n.charAt(0)) || special(n.charAt(0))) &&
      n.drop(1).forall(c => letter(c) || digit(c) || special(c) || c == '-')

  def validChannel(c: String, l: Limits): Boolean =
    c.length >= 2 && c.length <= l.channelMaxChars && c.charAt(0) == '#' && !c.exists(" ,\u0007\u0000\r\n".contains(_))

  /** The case-insensitive key of a nick or channel name (ASCII). */
  def fold(s: String): String = s.toLowerCase(java.util.Locale.ROOT)

  private def crlf(sb: java.lang.StringBuilder): ByteString = ByteString(sb.append("\r\n").toString.getBytes(UTF_8))

  /** ":server NNN target p1 ... :last\r\n"; the last parameter as a trailing one. */
  def numeric(code: Int, target: String, params: Seq[String], l: Limits): ByteString = {
    val sb = new java.lang.StringBuilder(64)
    sb.append(':').append(l.serverName).append(' ').append((1000 + code).toString, 1, 4).append(' ').append(target)
    params.zipWithIndex.foreach { case (p, i) =>
      sb.append(if (i == params.length - 1) " :" else " ").append(p)
    }
    crlf(sb)
  }

  /** ":prefix CMD middle... [:trailing]\r\n" (no trailing when None). */
  def fromUser(prefix: String, command: String, middle: Seq[String], trailing: Option[String]): ByteString = {
    val sb = new java.lang.StringBuilder(64)
    sb.append(':').append(prefix).append(' ').append(command)
    middle.foreach(m => sb.append(' ').append(m))
    trailing.foreach(t => sb.append(" :").append(t))
    crlf(sb)
  }

  /** A line of the connection: its text, or TooLong (its body and CRLF over the limit). */
  sealed trait Item
  final case class Text(line: String) extends Item
  case object TooLong extends Item

  /** Cuts buf at line ends (LF; a CR before it dropped). Returns the complete lines, the
    * rest and whether the connection is inside a line already too long (its bytes are
    * dropped up to its end; the answer, 417, is given once, at its end). */
  def split(buf: ByteString, discarding: Boolean, max: Int): (Vector[Item], ByteString, Boolean) = {
    val out = Vector.newBuilder[Item]
    var rest = buf
    var disc = discarding
    var i = rest.indexOf('\n'.toByte)
    while (i >= 0) {
      var body = rest.take(i)
      if (body.nonEmpty && body.last == '\r'.toByte) body = body.dropRight(1)
      out += (if (disc || body.length + 2 > max) TooLong else Text(body.decodeString(UTF_8)))
      disc = false
      rest = rest.drop(i + 1)
      i = rest.indexOf('\n'.toByte)
    }
    if (rest.length + 1 > max) (out.result(), ByteString.empty, true) // already too long: drop it as it comes
    else (out.result(), rest, disc)
  }
}
