package serverbench

/** The command line of spec/cli.json, parsed by hand so that every bad input gives the
  * contract's answer: one `error: ...` line naming the flag, exit 2, nothing on stdout.
  * The ranges are written here (a test reads spec/cli.json and checks every flag). */
object Cli {
  sealed trait FlagType
  final case class IntType(min: Long, max: Long) extends FlagType
  final case class NumberType(minExclusive: Double, max: Double) extends FlagType
  final case class EnumType(values: Seq[String]) extends FlagType

  final case class Flag(name: String, tpe: FlagType, required: Boolean, default: Option[String])

  private val variantFlag = Flag("--variant", EnumType(Seq("fair", "paper")), required = false, Some("fair"))
  private val payloadFlag = Flag("--payload", EnumType(Seq("copy", "share")), required = false, Some("copy"))

  val benchmarks: Map[String, Seq[Flag]] = Map(
    "pingping" -> Seq(
      Flag("--message-bytes", IntType(1, 67108864), required = true, None),
      Flag("--repetitions", IntType(1, 1000000000), required = true, None),
      payloadFlag,
      variantFlag),
    "spawn" -> Seq(
      Flag("--processes", IntType(1, 200000000), required = true, None),
      variantFlag),
    "throughput" -> Seq(
      Flag("--pairs", IntType(1, 1000000), required = true, None),
      Flag("--message-bytes", IntType(1, 67108864), required = true, None),
      Flag("--duration-s", NumberType(0, 86400), required = true, None),
      Flag("--report-every", IntType(1, 1000000000), required = false, Some("10000")),
      payloadFlag,
      variantFlag)
  )

  /** spec/cli.json implemented_variants. */
  val implementedVariants: Set[String] = Set("fair")

  sealed trait Command
  case object Help extends Command
  case object Version extends Command
  final case class PingPingArgs(messageBytes: Int, repetitions: Int, payloadCopy: Boolean, variant: String) extends Command
  final case class SpawnArgs(processes: Int, variant: String) extends Command
  final case class ThroughputArgs(pairs: Int, messageBytes: Int, durationS: Double, reportEvery: Int,
                                  payloadCopy: Boolean, variant: String) extends Command

  val usage: String =
    """usage:
      |  serverbench pingping   --message-bytes B --repetitions R [--payload copy|share] [--variant fair|paper]
      |  serverbench spawn      --processes N [--variant fair|paper]
      |  serverbench throughput --pairs P --message-bytes B --duration-s T [--report-every K] [--payload copy|share] [--variant fair|paper]
      |  serverbench --version
      |  serverbench --help
      |Prints one JSON record on stdout. Scheduler threads are set from outside:
      |  java -XX:ActiveProcessorCount=C -Dakka.actor.default-dispatcher.fork-join-executor.parallelism-min=C
      |       -Dakka.actor.default-dispatcher.fork-join-executor.parallelism-max=C -jar serverbench.jar ...""".stripMargin

  private val IntRe = "[0-9]+".r
  private val NumRe = "[0-9]+(\\.[0-9]+)?|\\.[0-9]+".r

  /** Left is the error message without the "error: " prefix. */
  def parse(args: Seq[String]): Either[String, Command] = args match {
    case Seq() => Left("missing sub-command (pingping, spawn, throughput, --version, --help)")
    case Seq("--help", _*) | Seq("-h", _*) => Right(Help)
    case Seq("--version", _*) => Right(Version)
    case Seq(cmd, rest @ _*) =>
      benchmarks.get(cmd) match {
        case None => Left(s"unknown sub-command '$cmd' (expected pingping, spawn or throughput)")
        case Some(flags) =>
          if (rest.contains("--help")) Right(Help)
          else collect(cmd, flags, rest).flatMap(values => build(cmd, values))
      }
  }

  /** Raw values by flag name, after the checks that do not need types. */
  private def collect(cmd: String, flags: Seq[Flag], rest: Seq[String]): Either[String, Map[String, String]] = {
    val known = flags.map(f => f.name -> f).toMap
    var values = Map.empty[String, String]
    var i = 0
    while (i < rest.length) {
      val tok = rest(i)
      if (!tok.startsWith("--")) return Left(s"unexpected argument '$tok' (flags are --name value)")
      val eq = tok.indexOf('=')
      val (name, inline) = if (eq >= 0) (tok.substring(0, eq), Some(tok.substring(eq + 1))) else (tok, None)
      val flag = known.getOrElse(name, null)
      if (flag == null) return Left(s"$name: unknown flag for $cmd")
      if (values.contains(name)) return Left(s"$name: given more than once")
      val value = inline match {
        case Some(v) => i += 1; v
        case None =>
          // A following "--x" is the next flag, not this one's value ("-5" is a value, and refused as a number).
          if (i + 1 >= rest.length || rest(i + 1).startsWith("--")) return Left(s"$name: missing value")
          i += 2; rest(i - 1)
      }
      if (value.isEmpty) return Left(s"$name: missing value")
      checkValue(flag, value) match {
        case Some(msg) => return Left(msg)
        case None => values += name -> value
      }
    }
    flags.find(f => f.required && !values.contains(f.name)) match {
      case Some(f) => Left(s"${f.name}: required flag missing")
      case None =>
        val withDefaults = flags.foldLeft(values)((m, f) => if (m.contains(f.name)) m else f.default.fold(m)(d => m + (f.name -> d)))
        val variant = withDefaults("--variant")
        if (!implementedVariants(variant)) Left(s"--variant: '$variant' is not built (implemented: ${implementedVariants.mkString(", ")})")
        else Right(withDefaults)
    }
  }

  private def checkValue(flag: Flag, v: String): Option[String] = flag.tpe match {
    case IntType(min, max) =>
      if (!IntRe.matches(v)) Some(s"${flag.name}: '$v' is not a plain decimal integer")
      else {
        val n = BigInt(v)
        if (n < min) Some(s"${flag.name}: $v is below the minimum $min")
        else if (n > max) Some(s"${flag.name}: $v is above the maximum $max")
        else None
      }
    case NumberType(minEx, max) =>
      if (!NumRe.matches(v)) Some(s"${flag.name}: '$v' is not a decimal number")
      else {
        val d = BigDecimal(v)
        if (d <= minEx) Some(s"${flag.name}: $v must be greater than ${fmt(minEx)}")
        else if (d > max) Some(s"${flag.name}: $v is above the maximum ${fmt(max)}")
        else None
      }
    case EnumType(allowed) =>
      if (allowed.contains(v)) None else Some(s"${flag.name}: '$v' is not one of ${allowed.mkString(", ")}")
  }

  private def fmt(d: Double): String = if (d == math.rint(d)) d.toLong.toString else d.toString

  private def build(cmd: String, v: Map[String, String]): Either[String, Command] = {
    def i(n: String) = v(n).toInt
    Right(cmd match {
      case "pingping" => PingPingArgs(i("--message-bytes"), i("--repetitions"), v("--payload") == "copy", v("--variant"))
      case "spawn" => SpawnArgs(i("--processes"), v("--variant"))
      case "throughput" =>
        ThroughputArgs(i("--pairs"), i("--message-bytes"), v("--duration-s").toDouble, i("--report-every"),
          v("--payload") == "copy", v("--variant"))
    })
  }
}
