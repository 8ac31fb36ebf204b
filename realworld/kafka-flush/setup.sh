#!/usr/bin/env bash
# Apache Kafka from Maven Central: the broker (kafka_2.13) and its tools (kafka-tools:
# ProducerPerformance, TopicCommand), with their runtime dependencies, copied by Maven
# into the cache. A JDK for jcmd (run.sh names the broker's threads with it). Safe to
# rerun: what exists is kept.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_init kafka-flush

VERSION=${KAFKA_VERSION:-3.9.0}
dir=$CACHE/kafka
libs=$dir/libs-$VERSION
mkdir -p "$dir"
command -v java >/dev/null || rw_apt openjdk-17-jre-headless
command -v jcmd >/dev/null || rw_apt openjdk-17-jdk-headless
if [ ! -f "$libs/.complete" ]; then
    command -v mvn >/dev/null || rw_apt maven
    rw_log "downloading kafka_2.13 and kafka-tools $VERSION (Maven Central)"
    # slf4j-reload4j: the broker logs through log4j 1 (reload4j), as Kafka's own tarball does
    cat >"$dir/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>realworld</groupId><artifactId>kafka-flush</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$VERSION</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>$VERSION</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>1.7.36</version></dependency>
  </dependencies>
</project>
POM
    rm -rf "$libs"
    mvn -B -q -f "$dir/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
        -DoutputDirectory="$libs" >&2
    touch "$libs/.complete"
fi
echo "$libs" >"$dir/libs"
