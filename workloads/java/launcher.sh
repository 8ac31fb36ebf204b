#!/bin/sh
# A zoo workload on the JVM: bin/java-NAME runs class CLASS from bin/java/ with the
# machine's java and the JVM options the workload is deployed with (the options written
# in by the Makefile; the JVM's defaults where it is empty).
here=$(dirname "$0")
exec java @OPTIONS@ -cp "$here/java" "$CLASS" "$@"
