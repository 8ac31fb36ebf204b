#!/usr/bin/env bash
# Apache ActiveMQ Artemis from Maven Central, and two broker instances made by its own
# `artemis create`: one as created (NIO journal, fdatasync on every journal sync), one
# created with --no-fsync (the fix). Safe to rerun: what exists is kept.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_init artemis-journal

VERSION=${ARTEMIS_VERSION:-2.40.0}
dir=$CACHE/artemis
home=$dir/apache-artemis-$VERSION
mkdir -p "$dir"
command -v java >/dev/null || rw_apt openjdk-17-jre-headless
if [ ! -x "$home/bin/artemis" ]; then
    tgz=$dir/apache-artemis-$VERSION-bin.tar.gz
    if [ ! -s "$tgz" ]; then
        command -v mvn >/dev/null || rw_apt maven
        rw_log "downloading apache-artemis $VERSION (Maven Central)"
        mvn -B -q dependency:copy -Dartifact="org.apache.activemq:apache-artemis:$VERSION:tar.gz:bin" \
            -DoutputDirectory="$dir" >&2
    fi
    tar -xzf "$tgz" -C "$dir"
fi

# The instances listen on loopback only, on one acceptor and without the web console:
# fewer acceptors and no web server mean fewer idle threads in the graph.
create() {
    local name=$1
    shift
    [ -f "$dir/$name/etc/broker.xml" ] && return 0
    rw_log "artemis create $name $*"
    "$home/bin/artemis" create --silent --force --nio --no-autotune --no-web \
        --no-amqp-acceptor --no-mqtt-acceptor --no-stomp-acceptor --no-hornetq-acceptor \
        --user rw --password rw --allow-anonymous --host 127.0.0.1 \
        "$@" "$dir/$name" >"$dir/$name.create.log" 2>&1
}
# Both run at once (run.sh alternates the load between them), so each has its port.
create broker-fsync --default-port 61626
create broker-nofsync --default-port 61627 --no-fsync
echo "$home" >"$dir/home"
