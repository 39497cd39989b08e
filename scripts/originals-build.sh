#!/usr/bin/env bash
# Builds the authors' original programs (bbstk/server-languages-benchmarks at 5fcfefc) that
# the `gap` profile runs beside ours, OUTSIDE the repository: their code is never copied
# into or committed to this repository (docs/gap.md, "The original programs").
#
#   scripts/originals-build.sh PATH/TO/server-languages-benchmarks
#
# Into $OUT (default $SERVERBENCH_ORIGINALS, else ~/.cache/serverbench/originals):
#   go/pingping, go/maxBlockingProcesses   go build with the installed Go (a go.mod of 1.21)
#   erlang/*.beam                          erlc with OTP 25, and an `imb` module the authors'
#                                          repository lacks: finalize(Pid) waits for
#                                          {done, Pid}, which is what pingping sends
#   scala/{maxSpeakers,pingping,maxBlockingProcesses}.jar
#                                          a throw-away Maven project each: Scala 2.11.12
#                                          (the release our scala_akka24 port uses; the
#                                          authors' build.sbt names 2.12.0, whose compiler
#                                          does not run on JDK 17) against akka-actor 2.4.12,
#                                          a shaded jar with Akka's reference.conf appended
# One edit: maxSpeakers.scala's 2-second window, the literal of `Thread.sleep(2000)`, is read
# from the system property serverbench.window.ms (default 2000, the published value), so that
# scripts/gap.py can run it at the profile's duration. Nothing else is changed. The sources'
# sha256 go to $OUT/sources.sha256. Takes a few minutes with a warm Maven cache.
set -euo pipefail
die() { echo "originals-build: $*" >&2; exit 2; }
[ -d "${1:?usage: $0 PATH/TO/server-languages-benchmarks}" ] || die "$1: no such folder"
repo=$(cd "$1" && pwd)
out=$(realpath -m "${OUT:-${SERVERBENCH_ORIGINALS:-$HOME/.cache/serverbench/originals}}")
tp=$repo/ConcurrentProcessesThroughput/scala/maxSpeakers.scala
for f in "$tp" ProcessCommunicationLatency/go/pingping.go ProcessCreationLatency/go/maxBlockingProcesses.go \
         ProcessCommunicationLatency/erlang/pingping.erl ProcessCreationLatency/erlang/maxBlocking.erl \
         ProcessCommunicationLatency/scala/pingping.scala ProcessCreationLatency/scala/maxBlockingProcesses.scala; do
  case $f in /*) p=$f ;; *) p=$repo/$f ;; esac
  [ -f "$p" ] || die "$p: no such file (is $repo the authors' repository at 5fcfefc?)"
done
grep -q 'Thread.sleep(2000)' "$tp" || die "$tp has no Thread.sleep(2000): not the 5fcfefc maxSpeakers.scala"
repo_root=$(cd "$(dirname "$0")/.." && pwd)
case "$out/" in
  "$repo_root"/*) die "OUT=$out lies inside the repository; choose a folder outside it" ;;
esac
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$repo" && sha256sum ConcurrentProcessesThroughput/scala/maxSpeakers.scala ProcessCommunicationLatency/*/pingping.* \
   ProcessCreationLatency/go/maxBlockingProcesses.go ProcessCreationLatency/erlang/maxBlocking.erl \
   ProcessCreationLatency/scala/maxBlockingProcesses.scala) > "$out/sources.sha256"

# Go
mkdir -p "$out/go"
for src in ProcessCommunicationLatency/go/pingping.go ProcessCreationLatency/go/maxBlockingProcesses.go; do
  name=$(basename "$src" .go)
  mkdir -p "$work/go-$name"
  cp "$repo/$src" "$work/go-$name/main.go"
  printf 'module original\n\ngo 1.21\n' > "$work/go-$name/go.mod"
  (cd "$work/go-$name" && GOTOOLCHAIN=local go build -o "$out/go/$name" .)
done

# Erlang
mkdir -p "$out/erlang" "$work/erl"
cat > "$work/erl/imb.erl" <<'ERL'
-module(imb).
-export([finalize/1]).
%% Not the authors' code: their repository lacks this module. pingping's processes send
%% {done, Pid} to the caller when they finish; finalize waits for that message.
finalize(Pid) -> receive {done, Pid} -> ok end.
ERL
erlc -o "$out/erlang" "$work/erl/imb.erl" "$repo/ProcessCommunicationLatency/erlang/pingping.erl" \
  "$repo/ProcessCreationLatency/erlang/maxBlocking.erl"

# Scala: one throw-away Maven project per program (each defines its own `object Main`)
mkdir -p "$out/scala"
scala_build() {  # name source
  local name=$1 src=$2 d=$work/scala-$1
  mkdir -p "$d/src/main/scala"
  if [ "$name" = maxSpeakers ]; then
    sed 's/Thread.sleep(2000)/Thread.sleep(java.lang.Long.getLong("serverbench.window.ms", 2000L).longValue)/' \
      "$src" > "$d/src/main/scala/$name.scala"
  else
    cp "$src" "$d/src/main/scala/$name.scala"
  fi
  cat > "$d/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local</groupId>
  <artifactId>original-$name</artifactId>
  <version>0</version>
  <properties><project.build.sourceEncoding>UTF-8</project.build.sourceEncoding></properties>
  <dependencies>
    <dependency><groupId>org.scala-lang</groupId><artifactId>scala-library</artifactId><version>2.11.12</version></dependency>
    <dependency><groupId>com.typesafe.akka</groupId><artifactId>akka-actor_2.11</artifactId><version>2.4.12</version></dependency>
  </dependencies>
  <build>
    <finalName>$name</finalName>
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
  (cd "$d" && mvn -q -B package) >&2
  cp "$d/target/$name.jar" "$out/scala/$name.jar"
}
scala_build maxSpeakers "$tp"
scala_build pingping "$repo/ProcessCommunicationLatency/scala/pingping.scala"
scala_build maxBlockingProcesses "$repo/ProcessCreationLatency/scala/maxBlockingProcesses.scala"
echo "$out"
