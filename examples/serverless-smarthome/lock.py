"""The door lock device function: validates a lock command and returns the lock's new state.

Stateless (see README.md). Unlocking by voice needs a spoken PIN in a real skill; here the
`Unlock` intent is refused for every door but the front door, to show a device's own check
ending in the workflow's friendly error.

Input:  {"intent": "Lock"|"Unlock", "slots": {"room": "front"|"back"}}
Output: {"device": "lock", "door": "front", "lockState": "LOCKED"}
"""
DOORS = ("front", "back")


class DeviceError(Exception):
    """A command this device cannot carry out; the message is what the user hears."""


def handle(event):
    event = event or {}
    intent = event.get("intent")
    door = (event.get("slots") or {}).get("room") or "front"
    if door not in DOORS:
        raise DeviceError("there is no lock on the %s door" % door)
    if intent == "Lock":
        return {"device": "lock", "door": door, "lockState": "LOCKED"}
    if intent == "Unlock":
        if door != "front":
            raise DeviceError("I only unlock the front door by voice")
        return {"device": "lock", "door": door, "lockState": "UNLOCKED"}
    raise DeviceError("a lock can be locked or unlocked, not '%s'" % intent)
