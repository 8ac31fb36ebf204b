#!/usr/bin/env bash
# util-linux's flock(1), as cron jobs use it to keep two runs of a job apart; Debian
# installs util-linux on every system, so there is nothing to install but a check.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_init flock-cron
rw_apt util-linux procps
command -v flock >/dev/null || { echo "flock-cron: flock(1) not found" >&2; exit 2; }
