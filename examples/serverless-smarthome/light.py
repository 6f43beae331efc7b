"""The light device function: validates a light command and returns the lights' new state.

Stateless: an instance keeps nothing between requests (instances scale to zero and any of them
may take the next request), so the function does not read the current state; it checks the
command against the home's layout, "applies" it and answers with the state the command sets,
as a smart-home skill's device adapter reports it to the voice service.

Input:  {"intent": "TurnOn"|"TurnOff", "slots": {"room": "kitchen"|"all", "brightness": 0-100}}
Output: {"device": "light", "room": "kitchen", "power": "ON", "brightness": 100}
        (room "all": {"device": "light", "room": "all", "power": "OFF", "rooms": [...]})
"""
ROOMS = ("kitchen", "living room", "bedroom", "bathroom", "hallway", "office")


class DeviceError(Exception):
    """A command this device cannot carry out; the message is what the user hears."""


def handle(event):
    event = event or {}
    intent = event.get("intent")
    if intent not in ("TurnOn", "TurnOff"):
        raise DeviceError("a light can be turned on or off, not '%s'" % intent)
    slots = event.get("slots") or {}
    room = slots.get("room")
    if room is None:
        raise DeviceError("which room's light?")
    if room != "all" and room not in ROOMS:
        raise DeviceError("there is no light in the %s" % room)
    power = "ON" if intent == "TurnOn" else "OFF"
    brightness = slots.get("brightness", 100 if power == "ON" else 0)
    if not isinstance(brightness, (int, float)) or not 0 <= brightness <= 100:
        raise DeviceError("brightness must be between 0 and 100")
    state = {"device": "light", "room": room, "power": power, "brightness": brightness}
    if room == "all":
        state["rooms"] = list(ROOMS)
    return state
