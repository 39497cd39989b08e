#!/usr/bin/env bash
# Builds the authors' original Scala throughput program (maxSpeakers.scala of
# bbstk/server-languages-benchmarks at 5fcfefc) on its own Akka 2.4.12, OUTSIDE the
# repository: its code is never copied into or committed to this repository
# (docs/akka-gap.md, "The original program"). A throw-away Maven project in $OUT (default
# ~/.cache/serverbench/akka-original) compiles the file with Scala 2.11.12 (the release our
# scala_akka24 port uses; the authors' build.sbt names 2.12.0, whose compiler does not run
# on JDK 17) against akka-actor 2.4.12, with ONE edit: the 2-second window, the literal of
# `Thread.sleep(2000)`, is read from the system property serverbench.window.ms (default
# 2000, the published value), so that scripts/akka_gap.py can run it at the profile's
# duration. Nothing else is changed. Prints the jar's path (what SERVERBENCH_AKKA_ORIGINAL_JAR
# names; the default path is where scripts/akka_gap.py looks).
#
#   scripts/akka-original-build.sh PATH/TO/ConcurrentProcessesThroughput/scala/maxSpeakers.scala
set -euo pipefail
src=${1:?usage: $0 PATH/TO/ConcurrentProcessesThroughput/scala/maxSpeakers.scala}
out=${OUT:-$HOME/.cache/serverbench/akka-original}
[ -f "$src" ] || { echo "akka-original-build: $src: no such file" >&2; exit 2; }
grep -q 'Thread.sleep(2000)' "$src" || { echo "akka-original-build: $src has no Thread.sleep(2000): not the 5fcfefc maxSpeakers.scala" >&2; exit 2; }
repo_root=$(cd "$(dirname "$0")/.." && pwd)
case "$(cd "$(dirname "$out")" 2>/dev/null && pwd)/" in
  "$repo_root"/*) echo "akka-original-build: OUT=$out lies inside the repository; choose a folder outside it" >&2; exit 2 ;;
esac
mkdir -p "$out/src/main/scala"
sed 's/Thread.sleep(2000)/Thread.sleep(java.lang.Long.getLong("serverbench.window.ms", 2000L).longValue)/' \
  "$src" > "$out/src/main/scala/maxSpeakers.scala"
sha256sum "$src" | cut -d' ' -f1 > "$out/source.sha256"
cat > "$out/pom.xml" <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local</groupId>
  <artifactId>akka-original</artifactId>
  <version>0</version>
  <properties><project.build.sourceEncoding>UTF-8</project.build.sourceEncoding></properties>
  <dependencies>
    <dependency><groupId>org.scala-lang</groupId><artifactId>scala-library</artifactId><version>2.11.12</version></dependency>
    <dependency><groupId>com.typesafe.akka</groupId><artifactId>akka-actor_2.11</artifactId><version>2.4.12</version></dependency>
  </dependencies>
  <build>
    <finalName>maxSpeakers</finalName>
    <sourceDirectory>src/main/scala</sourceDirectory>
    <plugins>
      <plugin>
        <groupId>net.alchim31.maven</groupId><artifactId>scala-maven-plugin</artifactId><version>4.9.2</version>
        <configuration><scalaVersion>2.11.12</scalaVersion><args><arg>-target:jvm-1.8</arg></args></configuration>
        <executions><execution><goals><goal>compile</goal></goals></execution></executions>
      </plugin>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId><artifactId>maven-shade-plugin</artifactId><version>3.6.0</version>
        <executions><execution><phase>package</phase><goals><goal>shade</goal></goals>
          <configuration>
            <createDependencyReducedPom>false</createDependencyReducedPom>
            <transformers>
              <transformer implementation="org.apache.maven.plugins.shade.resource.AppendingTransformer"><resource>reference.conf</resource></transformer>
              <transformer implementation="org.apache.maven.plugins.shade.resource.ManifestResourceTransformer"><mainClass>Main</mainClass></transformer>
            </transformers>
          </configuration>
        </execution></executions>
      </plugin>
    </plugins>
  </build>
</project>
EOF
(cd "$out" && mvn -q -B package) >&2
echo "$out/target/maxSpeakers.jar"
