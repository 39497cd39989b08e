package serverbench

import java.io.{ByteArrayOutputStream, PrintStream}
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths}

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ObjectNode
import com.networknt.schema.{JsonSchema, JsonSchemaFactory, SpecVersion}
import com.typesafe.config.{Config, ConfigFactory}

import Rt.Converters._

/** Reads the contract from ../../spec (never a copy) and runs Main in-process. */
object TestSupport {
  val mapper = new ObjectMapper()

  val specDir: Path = {
    val p = Option(System.getProperty("serverbench.spec.dir")).map(Paths.get(_)).getOrElse(Paths.get("../../spec"))
    require(Files.isDirectory(p), s"spec directory not found: $p")
    p.toAbsolutePath.normalize
  }

  lazy val cliJson: JsonNode = mapper.readTree(specDir.resolve("cli.json").toFile)
  lazy val recordSchemaJson: JsonNode = mapper.readTree(specDir.resolve("native-record.schema.json").toFile)

  private val factory = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012)

  /** The whole record schema, or one of its $defs as the root (same $defs, so local
    * $refs still resolve). The relative $id is dropped: it names no retrievable place. */
  def schema(defName: Option[String]): JsonSchema = {
    val root = recordSchemaJson.deepCopy[ObjectNode]()
    root.remove("$id")
    defName.foreach { d =>
      root.remove("oneOf")
      root.put("$ref", s"#/$$defs/$d")
    }
    factory.getSchema(root)
  }
  lazy val recordSchema: JsonSchema = schema(None)
  lazy val versionSchema: JsonSchema = schema(Some("version_info"))

  def errors(s: JsonSchema, node: JsonNode): Seq[String] = s.validate(node).asScala.toSeq.map(_.getMessage)

  final case class RunResult(code: Int, stdout: String, stderr: String) {
    def lines: Seq[String] = stdout.split("\n", -1).toSeq.filter(_.nonEmpty)
    def json: JsonNode = mapper.readTree(stdout)
  }

  def run(args: Seq[String], config: Config = ConfigFactory.load()): RunResult = {
    val o = new ByteArrayOutputStream()
    val e = new ByteArrayOutputStream()
    val code = Main.run(args.toArray, new PrintStream(o, true, "UTF-8"), new PrintStream(e, true, "UTF-8"), config)
    RunResult(code, new String(o.toByteArray, StandardCharsets.UTF_8), new String(e.toByteArray, StandardCharsets.UTF_8))
  }

  def fields(n: JsonNode): Iterator[(String, JsonNode)] = n.fields().asScala.map(e => e.getKey -> e.getValue)
}
