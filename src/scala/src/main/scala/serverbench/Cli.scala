package serverbench

import Rt.Converters._

import com.typesafe.config.{ConfigFactory, ConfigList, ConfigObject, ConfigParseOptions, ConfigSyntax, ConfigValue, ConfigValueType}

/** The command line parsed from spec/cli.json itself: Maven copies the file into the jar
  * (resource serverbench/cli.json, see pom.xml) and it is read with Typesafe Config (the
  * actor runtime's, JSON syntax), so there is no flag table here. A flag, benchmark, role or variant added to
  * cli.json is parsed without a Scala edit. Every bad input gives the contract's answer: one
  * `error: ...` line naming the flag, exit 2, nothing on stdout. */
object Cli {
  final case class Flag(name: String, param: Option[String], tpe: String, min: Option[BigDecimal],
                        max: Option[BigDecimal], minExclusive: Option[BigDecimal], values: Seq[String],
                        required: Boolean, default: Option[String])
  final case class Benchmark(flags: Map[String, Flag], roles: Map[String, Map[String, Flag]])
  final case class Language(benchmarks: Seq[String], variants: Option[Seq[String]], roles: Map[String, Seq[String]])
  final case class Spec(languages: Map[String, Language], benchmarks: Map[String, Benchmark],
                        implementedVariants: Seq[String])

  object Spec {
    val Resource = "serverbench/cli.json"
    private val json = ConfigParseOptions.defaults.setSyntax(ConfigSyntax.JSON).setAllowMissing(false)

    def fromResource(): Spec = fromObject(ConfigFactory.parseResources(Resource, json).root)
    def fromString(text: String): Spec = fromObject(ConfigFactory.parseString(text, json).root)

    private def obj(v: ConfigValue): Map[String, ConfigValue] = v match {
      case o: ConfigObject => o.asScala.toMap
      case null => Map.empty
      case other => throw new IllegalArgumentException(s"cli.json: object expected, got ${other.render}")
    }
    private def strings(v: ConfigValue): Seq[String] = v match {
      case l: ConfigList => l.asScala.toSeq.map(_.unwrapped.toString)
      case _ => Nil
    }
    private def num(v: ConfigValue): Option[BigDecimal] =
      Option(v).filter(_.valueType == ConfigValueType.NUMBER).map(x => BigDecimal(x.unwrapped.toString))
    private def flags(v: ConfigValue): Map[String, Flag] = obj(v).map { case (name, fv) =>
      val f = obj(fv)
      name -> Flag(name,
        f.get("param").filter(_.valueType == ConfigValueType.STRING).map(_.unwrapped.toString),
        f("type").unwrapped.toString, num(f.getOrElse("min", null)), num(f.getOrElse("max", null)),
        num(f.getOrElse("min_exclusive", null)), strings(f.getOrElse("values", null)),
        f.get("required").exists(_.unwrapped == java.lang.Boolean.TRUE),
        f.get("default").filter(_.valueType != ConfigValueType.NULL).map(_.unwrapped.toString))
    }
    private def fromObject(root: ConfigObject): Spec = {
      val r = obj(root)
      Spec(
        obj(r("languages")).map { case (l, lv) =>
          val lo = obj(lv)
          l -> Language(strings(lo.getOrElse("benchmarks", null)),
            lo.get("variants").map(strings),
            obj(lo.getOrElse("roles", null)).map { case (b, rs) => b -> strings(rs) })
        },
        obj(r("benchmarks")).map { case (b, bv) =>
          val bo = obj(bv)
          b -> Benchmark(flags(bo.getOrElse("flags", null)),
            obj(bo.getOrElse("roles", null)).map { case (role, rv) => role -> flags(obj(rv).getOrElse("flags", null)) })
        },
        strings(r("implemented_variants")))
    }
  }

  /** spec/cli.json as built into the jar. */
  lazy val spec: Spec = Spec.fromResource()

  /** Parsed flag values by cli.json "param": Long (int), Double (number), String (enum). */
  final case class Params(values: Map[String, Any]) {
    def long(p: String): Long = values(p).asInstanceOf[Long]
    def int(p: String): Int = Math.toIntExact(long(p))
    def double(p: String): Double = values(p).asInstanceOf[Double]
    def str(p: String): String = values(p).asInstanceOf[String]
  }

  sealed trait Command
  case object Help extends Command
  case object Version extends Command
  /** role: for benchmarks with roles; variant: the value of the flag whose param is null. */
  final case class Run(benchmark: String, role: Option[String], variant: Option[String], params: Params) extends Command

  final case class PingPingArgs(messageBytes: Int, repetitions: Int, payloadCopy: Boolean, variant: String)
  final case class SpawnArgs(processes: Int, variant: String)
  final case class ThroughputArgs(pairs: Int, messageBytes: Int, durationS: Double, reportEvery: Int,
                                  payloadCopy: Boolean, variant: String)
  object PingPingArgs {
    def apply(r: Run): PingPingArgs = PingPingArgs(r.params.int("message_bytes"), r.params.int("repetitions"),
      r.params.str("payload") == "copy", r.variant.getOrElse(""))
  }
  object SpawnArgs {
    def apply(r: Run): SpawnArgs = SpawnArgs(r.params.int("processes"), r.variant.getOrElse(""))
  }
  object ThroughputArgs {
    def apply(r: Run): ThroughputArgs = ThroughputArgs(r.params.int("pairs"), r.params.int("message_bytes"),
      r.params.double("duration_s"), r.params.int("report_every"), r.params.str("payload") == "copy", r.variant.getOrElse(""))
  }

  private val IntRe = "[0-9]+".r
  private val NumRe = "[0-9]+(\\.[0-9]*)?|\\.[0-9]+".r

  /** Left is the error message without the "error: " prefix. */
  def parse(args: Seq[String], language: String = Main.Language, s: Spec = spec): Either[String, Command] = {
    val lang = s.languages(language)
    val listed = lang.benchmarks.mkString(", ")
    args match {
      case Seq() => Left(s"missing sub-command (expected one of: $listed, --version, --help)")
      case Seq("--version") => Right(Version)
      case Seq("--version", arg, _*) => Left(s"--version takes no value or arguments, got '$arg'")
      case Seq("--help" | "-h", _*) => Right(Help)
      case Seq(_, rest @ _*) if rest.exists(a => a == "--help" || a == "-h") => Right(Help)
      case Seq(cmd, rest @ _*) =>
        s.benchmarks.get(cmd) match {
          case None => Left(s"unknown sub-command '$cmd' (expected one of: $listed, --version, --help)")
          case Some(_) if !lang.benchmarks.contains(cmd) =>
            Left(s"$language does not implement the benchmark $cmd (it implements: $listed)")
          case Some(b) if b.roles.isEmpty => flags(cmd, b.flags, rest).fold[Either[String, Command]](Left(_), run(s, language, lang, cmd, None, _))
          case Some(b) =>
            val known = b.roles.keys.toSeq.sorted.mkString(", ")
            rest match {
              case Seq(role, more @ _*) if !role.startsWith("-") =>
                val implemented = lang.roles.getOrElse(cmd, b.roles.keys.toSeq.sorted)
                if (!b.roles.contains(role)) Left(s"unknown role '$role' for $cmd (expected one of: $known)")
                else if (!implemented.contains(role))
                  Left(s"$language does not implement the benchmark $cmd role $role (it implements: ${implemented.mkString(", ")})")
                else flags(cmd, b.roles(role), more).fold[Either[String, Command]](Left(_), run(s, language, lang, cmd, Some(role), _))
              case _ => Left(s"$cmd needs a role first: one of $known")
            }
        }
    }
  }

  private def run(s: Spec, language: String, lang: Language, cmd: String, role: Option[String],
                  parsed: (Option[String], Params)): Either[String, Command] = {
    val (variant, params) = parsed
    val implemented = lang.variants.getOrElse(s.implementedVariants)
    variant match {
      case Some(v) if !implemented.contains(v) =>
        Left(s"--variant: '$v' is not implemented for $language $cmd (only: ${implemented.mkString(", ")})")
      case _ => Right(Run(cmd, role, variant, params))
    }
  }

  /** Raw values by flag name, then each flag checked, defaulted or reported missing. */
  private def flags(cmd: String, known: Map[String, Flag], rest: Seq[String]): Either[String, (Option[String], Params)] = {
    var raw = Map.empty[String, String]
    var i = 0
    while (i < rest.length) {
      val tok = rest(i)
      if (!tok.startsWith("--") || tok == "--") return Left(s"unexpected argument '$tok' for $cmd (flags are --name value)")
      val eq = tok.indexOf('=')
      val (name, inline) = if (eq >= 0) (tok.substring(0, eq), Some(tok.substring(eq + 1))) else (tok, None)
      if (!known.contains(name)) return Left(s"$name: unknown flag for $cmd")
      if (raw.contains(name)) return Left(s"$name: given more than once")
      val value = inline match {
        case Some(v) => i += 1; v
        case None =>
          // A following "--x" is the next flag, not this one's value ("-5" is a value, and refused as a number).
          if (i + 1 >= rest.length || rest(i + 1).startsWith("--")) return Left(s"$name: missing value")
          i += 2; rest(i - 1)
      }
      if (value.isEmpty) return Left(s"$name: missing value")
      raw += name -> value
    }
    var variant: Option[String] = None
    var params = Map.empty[String, Any]
    for (name <- known.keys.toSeq.sorted) {
      val f = known(name)
      val text = raw.get(name).orElse(f.default)
      if (text.isEmpty && f.required) return Left(s"$name: required flag missing for $cmd")
      for (t <- text) convert(f, t) match {
        case Left(msg) => return Left(msg)
        case Right(v) => f.param match {
          case None => variant = Some(v.toString)
          case Some(p) => params += p -> v
        }
      }
    }
    Right((variant, Params(params)))
  }

  private def inRange(f: Flag, d: BigDecimal): Boolean =
    f.min.forall(d >= _) && f.max.forall(d <= _) && f.minExclusive.forall(d > _)

  private def range(f: Flag): String =
    f.min.map(m => s"[$m").orElse(f.minExclusive.map(m => s"($m")).getOrElse("(-inf") + ", " + f.max.map(m => s"$m]").getOrElse("inf)")

  private def convert(f: Flag, v: String): Either[String, Any] = f.tpe match {
    case "int" =>
      if (!IntRe.pattern.matcher(v).matches) Left(s"${f.name}: '$v' is not a plain decimal integer")
      else if (!inRange(f, BigDecimal(v)) || BigInt(v) > Long.MaxValue) Left(s"${f.name}: $v is out of range ${range(f)}")
      else Right(v.toLong)
    case "number" =>
      if (!NumRe.pattern.matcher(v).matches) Left(s"${f.name}: '$v' is not a plain decimal number")
      else {
        val d = BigDecimal(if (v.startsWith(".")) "0" + v else v.stripSuffix("."))
        if (!inRange(f, d) || d.toDouble.isInfinite) Left(s"${f.name}: $v is out of range ${range(f)}")
        else Right(d.toDouble)
      }
    case "enum" =>
      if (f.values.contains(v)) Right(v) else Left(s"${f.name}: '$v' is not one of ${f.values.mkString(", ")}")
    case other => Left(s"${f.name}: cli.json type '$other' is not supported by this program")
  }

  /** The --help text, generated from the spec. */
  def usage(language: String = Main.Language, s: Spec = spec): String = {
    def line(cmd: String, flags: Map[String, Flag]): String =
      s"  serverbench $cmd" + flags.keys.toSeq.sorted.map { n =>
        val f = flags(n)
        val arg = if (f.tpe == "enum") f.values.mkString("|") else n.stripPrefix("--").replace('-', '_').toUpperCase
        if (f.required) s" $n $arg" else s" [$n $arg]"
      }.mkString
    val lang = s.languages(language)
    val lines = lang.benchmarks.flatMap { b =>
      val bench = s.benchmarks(b)
      if (bench.roles.isEmpty) Seq(line(b, bench.flags))
      else lang.roles.getOrElse(b, bench.roles.keys.toSeq.sorted).map(r => line(s"$b $r", bench.roles(r)))
    }
    val threads =
      if (!Rt.SocketsLanguage.contains(language)) Seq(
        s"  java -XX:ActiveProcessorCount=C -D${Rt.ConfigPrefix}.actor.default-dispatcher.fork-join-executor.parallelism-min=C",
        s"       -D${Rt.ConfigPrefix}.actor.default-dispatcher.fork-join-executor.parallelism-max=C -jar ${Rt.JarName} ...")
      else Seq(s"  java -XX:ActiveProcessorCount=C -cp ${Rt.JarName} serverbench.ScalaSocketsMain ...")
    (("usage:" +: lines) ++ Seq(
      "  serverbench --version",
      "  serverbench --help",
      "Prints one JSON record on stdout (a server: its listening line first). Scheduler threads are set from outside:") ++
      threads).mkString("\n")
  }
}
