#!/bin/sh
# An operator's script that freezes a service for a moment (to copy its files, or to
# take a consistent snapshot): SIGSTOP, a slow step (here `sleep`), SIGCONT.
pid=$1 hold=${2:-1}
kill -STOP "$pid"
sleep "$hold"
kill -CONT "$pid"
