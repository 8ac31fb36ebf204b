#!/usr/bin/env bash
# Mosquitto (MQTT broker) from Debian. Safe to rerun.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_init mosquitto-autosave
rw_apt mosquitto
