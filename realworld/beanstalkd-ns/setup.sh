#!/usr/bin/env bash
# beanstalkd (work queue) from Debian, and util-linux's unshare. Safe to rerun. The
# namespaced root is made by run.sh from the installed binary, each run.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_init beanstalkd-ns
rw_apt beanstalkd util-linux
