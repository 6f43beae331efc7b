"""The thermostat device function: validates a heating command and returns the new setpoint.

Stateless, like every device function here (see README.md: instances scale to zero, so the
answer is the state the command sets, not one read back from memory).

Input:  {"intent": "SetTemperature", "slots": {"room": "living room", "value": 21}}
        {"intent": "TurnOff"|"TurnOn", "slots": {...}}
Output: {"device": "thermostat", "room": "living room", "mode": "HEAT", "targetSetpoint": 21,
         "scale": "CELSIUS"}
"""
MIN_C, MAX_C = 10, 30
DEFAULT_ROOM = "living room"
ROOMS = ("living room", "bedroom", "kitchen", "bathroom", "office")


class DeviceError(Exception):
    """A command this device cannot carry out; the message is what the user hears."""


def handle(event):
    event = event or {}
    intent = event.get("intent")
    slots = event.get("slots") or {}
    room = slots.get("room") or DEFAULT_ROOM
    if room not in ROOMS:
        raise DeviceError("there is no thermostat in the %s" % room)
    state = {"device": "thermostat", "room": room, "scale": "CELSIUS"}
    if intent == "SetTemperature":
        value = slots.get("value")
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise DeviceError("to what temperature?")
        if not MIN_C <= value <= MAX_C:
            raise DeviceError("I can set the heating between %d and %d degrees, not %g" % (MIN_C, MAX_C, value))
        state.update(mode="HEAT", targetSetpoint=int(value) if value == int(value) else value)
    elif intent == "TurnOff":
        state.update(mode="OFF")
    elif intent == "TurnOn":
        state.update(mode="HEAT", targetSetpoint=slots.get("value", 20))
    else:
        raise DeviceError("a thermostat cannot do '%s'" % intent)
    return state
