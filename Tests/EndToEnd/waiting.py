"""Waiting without fixed sleeps: `eventually` polls for what must happen, against a deadline, and
returns as soon as it has; `throughout` checks what must keep holding (what must not happen) over
a period a test waits out on purpose, and fails the moment it stops. Either names, when it fails,
what never happened or what stopped holding."""

import time


def _text(message):
    return message() if callable(message) else message


def eventually(condition, timeout, interval=0.05, message="the condition"):
    """Calls `condition` every `interval` s until it returns something truthy, and returns that;
    after `timeout` s raises AssertionError naming `message` (a string, or a callable that makes
    one then, e.g. with the last value seen). Exceptions `condition` raises are not caught."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"timed out after {timeout} s waiting for {_text(message)}")
        time.sleep(min(interval, left))


def throughout(condition, duration, interval=0.05, message="the condition"):
    """Checks `condition` every `interval` s for `duration` s, the last time once they are up;
    raises AssertionError naming `message` the first time it is false."""
    started = time.monotonic()
    deadline = started + duration
    while True:
        now = time.monotonic()
        if not condition():
            raise AssertionError(f"{_text(message)}: no longer so {now - started:.2f} s into the {duration} s it must hold")
        if now >= deadline:
            return
        time.sleep(min(interval, deadline - now))
