#!/bin/sh
# A nightly job as crontabs hold them: the whole job under `flock`, so that two runs
# never overlap, although only its first step needs the lock; the slow step after it
# (here `sleep`, standing for an upload) keeps the lock too. With --fixed the lock is
# held for the first step only.
lock=$1 slow=${2:-4}
if [ "${3:-}" = --fixed ]; then
    flock "$lock" sh -c 'echo rotated >/dev/null'
    sleep "$slow"
else
    flock "$lock" sh -c "echo rotated >/dev/null; sleep $slow"
fi
