package serverbench.akka24

/** A small JSON encoder for the one record a run prints. Objects keep insertion order
  * (field order does not matter to the contract, but a stable order reads better). */
object Json {
  sealed trait Value
  final case class Obj(fields: (String, Value)*) extends Value
  final case class Arr(items: Seq[Value]) extends Value
  final case class Str(s: String) extends Value
  final case class Num(d: Double) extends Value
  final case class Int(l: Long) extends Value
  final case class Bool(b: Boolean) extends Value
  case object Null extends Value

  def num(d: Double): Value = Num(d)
  def int(l: Long): Value = Int(l)
  def optInt(o: Option[Long]): Value = o.fold[Value](Null)(Int(_))
  def optNum(o: Option[Double]): Value = o.fold[Value](Null)(Num(_))

  def encode(v: Value): String = {
    val sb = new java.lang.StringBuilder(256)
    write(sb, v)
    sb.toString
  }

  private def write(sb: java.lang.StringBuilder, v: Value): Unit = v match {
    case Obj(fields @ _*) =>
      sb.append('{')
      var first = true
      for ((k, x) <- fields) {
        if (!first) sb.append(',')
        first = false
        writeString(sb, k)
        sb.append(':')
        write(sb, x)
      }
      sb.append('}')
    case Arr(items) =>
      sb.append('[')
      var first = true
      for (x <- items) {
        if (!first) sb.append(',')
        first = false
        write(sb, x)
      }
      sb.append(']')
    case Str(s) => writeString(sb, s)
    case Num(d) =>
      // JSON has no NaN/Infinity; a value that cannot be written is "not measured".
      if (d.isNaN || d.isInfinite) sb.append("null")
      else if (d == math.rint(d) && math.abs(d) < 1e15) sb.append(d.toLong).append(".0")
      else sb.append(java.lang.Double.toString(d)) // e.g. 1.5E-4: valid JSON
    case Int(l) => sb.append(l)
    case Bool(b) => sb.append(b)
    case Null => sb.append("null")
  }

  private def writeString(sb: java.lang.StringBuilder, s: String): Unit = {
    sb.append('"')
    var i = 0
    while (i < s.length) {
      val c = s.charAt(i)
      c match {
        case '"' => sb.append("\\\"")
        case '\\' => sb.append("\\\\")
        case '\n' => sb.append("\\n")
        case '\r' => sb.append("\\r")
        case '\t' => sb.append("\\t")
        case _ if c < 0x20 => sb.append(f"\\u${c.toInt}%04x")
        case _ => sb.append(c)
      }
      i += 1
    }
    sb.append('"')
  }
}
