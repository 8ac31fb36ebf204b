#!/bin/sh
# A zoo workload on the JVM: bin/java-NAME runs class CLASS from bin/java/ with the
# machine's java. The JVM's options a server would run with are its defaults.
here=$(dirname "$0")
exec java -cp "$here/java" "$CLASS" "$@"
