package serverbench

import Rt.Converters._

import com.typesafe.config.{Config, ConfigFactory, ConfigObject, ConfigParseOptions, ConfigSyntax, ConfigValueType}

/** The paper variant's knobs (docs/spec.md "The paper variant"). Each knob is a flag in
  * spec/cli.json with a `knob` entry {fair, paper, languages}; its default "variant" means
  * fair and mixed take the fair value, paper the paper value. A knob the language does not
  * have, or a value that contradicts --variant fair|paper, is a usage error (exit 2). */
object Knobs {
  private val json = ConfigParseOptions.defaults.setSyntax(ConfigSyntax.JSON).setAllowMissing(false)
  private lazy val root: ConfigObject = ConfigFactory.parseResources(Cli.Spec.Resource, json).root

  /** param -> resolved value, or the one error line. */
  def resolve(benchmark: String, variant: String, params: Cli.Params,
              lang: String = Main.Language): Either[String, Map[String, String]] = {
    val flags = Option(root.get("benchmarks")).collect { case o: ConfigObject => o }
      .flatMap(b => Option(b.get(benchmark))).collect { case o: ConfigObject => o }
      .flatMap(b => Option(b.get("flags"))).collect { case o: ConfigObject => o.asScala.toSeq }
      .getOrElse(Nil).sortBy(_._1)
    flags.foldLeft[Either[String, Map[String, String]]](Right(Map.empty)) {
      case (l @ Left(_), _) => l
      case (Right(acc), (flag, fv: ConfigObject)) if fv.containsKey("knob") =>
        val param = fv.get("param").unwrapped.toString
        val k = fv.get("knob").asInstanceOf[ConfigObject]
        val langs = k.get("languages").unwrapped.asInstanceOf[java.util.List[_]].asScala.map(_.toString)
        val fair = k.get("fair").unwrapped.toString
        val paper = k.get("paper") match {
          case o: ConfigObject => Option(o.get(lang)).map(_.unwrapped.toString).getOrElse("")
          case v if v.valueType == ConfigValueType.STRING => v.unwrapped.toString
          case _ => ""
        }
        val value = params.values.get(param).map(_.toString).getOrElse("variant")
        if (!langs.contains(lang)) {
          if (value != "variant") Left(s"$flag is not a knob of $lang $benchmark (only ${langs.mkString(", ")})")
          else Right(acc)
        } else if (value == "variant") Right(acc + (param -> (if (variant == "paper") paper else fair)))
        else if (variant == "fair" && value != fair)
          Left(s"$flag $value contradicts --variant fair (fair means $fair; use --variant mixed)")
        else if (variant == "paper" && value != paper)
          Left(s"$flag $value contradicts --variant paper (paper means $paper for $lang; use --variant mixed)")
        else Right(acc + (param -> value))
      case (acc, _) => acc
    }
  }

  /** Akka 2.4.12's reference sizing of the default dispatcher (Akka 2.6's and Pekko's
    * reference sizing is the same), which the original programs ran under (no
    * application.conf in the original repository): parallelism = ceil(cores x 3.0) clamped
    * to [8, 64]. Overrides the harness's -D min = max = cores. */
  val DefaultDispatcher: Config = ConfigFactory.parseString(
    s"""${Rt.ConfigPrefix}.actor.default-dispatcher.fork-join-executor {
      |  parallelism-min = 8
      |  parallelism-factor = 3.0
      |  parallelism-max = 64
      |}""".stripMargin)

  /** The actor system's config for these knobs (dispatcher default: the reference sizing). */
  def config(knobs: Map[String, String], base: Config): Config =
    if (knobs.get("dispatcher").contains("default")) DefaultDispatcher.withFallback(base) else base

  /** The knob flags given on the command line (not "variant"), for the record's params. */
  def givenFlags(params: Cli.Params, names: String*): Seq[(String, Json.Value)] =
    names.flatMap(n => params.values.get(n).map(_.toString).filter(_ != "variant").map(v => n -> (Json.Str(v): Json.Value)))

  def json(knobs: Map[String, String]): Json.Obj = Json.Obj(knobs.toSeq.sortBy(_._1).map { case (k, v) => k -> (Json.Str(v): Json.Value) }: _*)

  /** Wall-clock ms, as the originals timed (System.currentTimeMillis), printed /1000. */
  def reportedSeconds(t0Ms: Long, t1Ms: Long): Double = (t1Ms - t0Ms) / 1000.0
}
