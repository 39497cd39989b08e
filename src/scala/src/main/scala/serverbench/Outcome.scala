package serverbench

/** What a benchmark hands back to Main, which adds benchmark/language/variant/runtime. */
final case class Outcome(params: Json.Obj, metrics: Json.Obj, validation: Json.Obj, ok: Boolean)

/** A run that cannot go on for a reason outside the program (e.g. the port is taken):
  * Main prints `error: <message>` (one line, no record) and exits 1. */
final class RunFailure(message: String) extends RuntimeException(message)
