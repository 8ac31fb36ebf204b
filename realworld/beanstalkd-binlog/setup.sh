#!/usr/bin/env bash
# beanstalkd (work queue) from Debian. Safe to rerun.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_init beanstalkd-binlog
rw_apt beanstalkd
