package serverbench.akka24

/** What a benchmark hands back to Main, which adds benchmark/language/variant/runtime. */
final case class Outcome(params: Json.Obj, metrics: Json.Obj, validation: Json.Obj, ok: Boolean)

