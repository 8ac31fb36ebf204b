"""An event loop traced by the causeway module that stalls once for 300 ms in
handle_request > load_settings > parse_config; the stall watchdog must dump during it.
Run with the module on PYTHONPATH: python3 stall_loop.py [TURNS]"""

import sys
import time

import causeway


def parse_config(turn):
    # The stall: one turn sleeps 300 ms where the others take microseconds.
    if turn == STALL_TURN:
        time.sleep(0.3)
    return {"turn": turn}


def load_settings(turn):
    return parse_config(turn)


def handle_request(turn):
    return load_settings(turn)["turn"]


def wait_for_event(turn):
    # The loop's idle time is its own short call, as in a real loop's poll: left in
    # event_loop's body, 5 ms per turn would add up there to more self time than the
    # stall itself when the watchdog dumps early in it.
    time.sleep(0.005)
    return turn


def event_loop(turns):
    for turn in range(turns):
        causeway.heartbeat()
        handle_request(turn)
        wait_for_event(turn)


def main():
    event_loop(TURNS)


TURNS = int(sys.argv[1]) if len(sys.argv) > 1 else 60
STALL_TURN = TURNS // 2
causeway.start()
main()
