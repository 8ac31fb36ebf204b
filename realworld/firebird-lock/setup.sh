#!/usr/bin/env bash
# Firebird 3.0 from Debian, run from a private root directory: its own firebird.conf
# (ServerMode = Classic: one server process per connection; loopback only) and
# lock directory, linked to the package's files otherwise. The system's configuration
# and its service are left alone. Safe to rerun.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_init firebird-lock

rw_apt firebird3.0-server firebird3.0-utils
engine=$(dpkg -L firebird3.0-server-core | grep '/plugins/libEngine12.so$' | head -1)
lib=$(dirname "$(dirname "$engine")")   # /usr/lib/<arch>/firebird/3.0
root=$CACHE/firebird/root
mkdir -p "$root" "$CACHE/firebird/lock" "$CACHE/firebird/db"
for f in UDF firebird.msg intl lib plugins plugins.conf fbtrace.conf; do
    if [ -e "$lib/$f" ]; then ln -sfn "$lib/$f" "$root/$f"; fi
done
cp /etc/firebird/3.0/databases.conf "$root/databases.conf"   # the security database's alias
# run.sh appends RemoteServicePort (a port with no socket left from an earlier run).
cat >"$root/firebird.conf.base" <<'CONF'
# realworld/firebird-lock: one server process per connection, on loopback only
ServerMode = Classic
RemoteBindAddress = 127.0.0.1
DatabaseAccess = Full
CONF
[ -r /etc/firebird/3.0/SYSDBA.password ] ||
    { echo "firebird-lock: /etc/firebird/3.0/SYSDBA.password missing (dpkg-reconfigure firebird3.0-server)" >&2; exit 2; }
