#!/usr/bin/env bash
# Apache Derby's network server from Maven Central (derbynet with derby, derbyshared
# and derbytools; derbyclient for the load's JDBC driver), copied by Maven into the
# cache, and the load client (Load.java) compiled against nothing but the JDK (it loads
# the driver by its URL). A JDK for javac and jcmd. Safe to rerun: what exists is kept.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_init derby-log
here=$(cd "$(dirname "$0")" && pwd)

# 10.16 is the last release line for Java 17 (10.17 needs Java 21)
VERSION=${DERBY_VERSION:-10.16.1.1}
dir=$CACHE/derby
libs=$dir/libs-$VERSION
mkdir -p "$dir"
command -v java >/dev/null || rw_apt openjdk-17-jre-headless
command -v javac >/dev/null && command -v jcmd >/dev/null || rw_apt openjdk-17-jdk-headless
if [ ! -f "$libs/.complete" ]; then
    command -v mvn >/dev/null || rw_apt maven
    rw_log "downloading Derby $VERSION (Maven Central)"
    deps=""
    for a in derby derbynet derbyshared derbytools derbyclient; do
        deps="$deps<dependency><groupId>org.apache.derby</groupId><artifactId>$a</artifactId><version>$VERSION</version></dependency>"
    done
    cat >"$dir/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>realworld</groupId><artifactId>derby-log</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>$deps</dependencies>
</project>
POM
    rm -rf "$libs"
    mvn -B -q -f "$dir/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
        -DoutputDirectory="$libs" >&2
    touch "$libs/.complete"
fi
echo "$libs" >"$dir/libs"
classes=$dir/load
if [ ! -f "$classes/Load.class" ] || [ "$here/Load.java" -nt "$classes/Load.class" ]; then
    mkdir -p "$classes"
    javac -d "$classes" "$here/Load.java"
fi
