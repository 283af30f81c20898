"""The per-person rate (--rate-limit-per-user N/min) counts calls in fixed wall-clock minutes
(server/tools/person_limits.cpp). A test that fills one person's minute and expects the next call
to be refused must do it within one minute; this waits, when needed, for a minute to begin that
leaves enough room."""
import time

MINUTE = 60.0


def with_room_in_this_minute(seconds_needed=20.0):
    """Returns once at least seconds_needed remain before the wall-clock minute turns."""
    assert seconds_needed < MINUTE / 2
    left = MINUTE - time.time() % MINUTE
    if left < seconds_needed:
        time.sleep(left + 0.05)  # until the next minute begins: the clock, not a guess
