"""Language understanding for the smart-home skill: an utterance -> an intent and its slots.

Rules, not a model: each intent is a few regular expressions over the lower-cased utterance,
and the slots (device, room, value) are picked out of the same text. An utterance that matches
no rule raises UnknownIntent; the workflow's Catch turns that into a friendly answer.

Input:  {"text": "turn on the kitchen light"}            (what the frontend hands on)
        {"intent": "TurnOn", "slots": {...}}             (an Alexa directive, already resolved)
Output: {"intent": "TurnOn", "device": "light", "slots": {"room": "kitchen"}, "text": ...}
"""
import re

ROOMS = ("kitchen", "living room", "bedroom", "bathroom", "hallway", "office", "garage")
DEVICES = {"light": "light", "lights": "light", "lamp": "light", "lamps": "light",
           "heating": "thermostat", "heater": "thermostat", "thermostat": "thermostat",
           "temperature": "thermostat", "lock": "lock", "door": "lock", "front door": "lock",
           "back door": "lock"}
INTENTS = (
    ("GoodNight", r"\bgood ?night\b|\bgoing to (bed|sleep)\b"),
    ("GoodMorning", r"\bgood ?morning\b|\bmorning routine\b"),
    ("SetTemperature", r"\b(set|change|make)\b.*\b(to|at)\s+-?\d+(\.\d+)?\s*(degrees?|°)?"),
    ("SetTemperature", r"\b(heat|warm|cool)\b.*\bto\s+-?\d+"),
    ("Unlock", r"\bunlock\b|\bopen the (front |back )?door\b"),
    ("Lock", r"\block\b|\bclose the (front |back )?door\b"),
    ("TurnOn", r"\b(turn|switch|put)\s+on\b|\b(turn|switch)\b.*\bon\b|\blights? on\b"),
    ("TurnOff", r"\b(turn|switch|put)\s+off\b|\b(turn|switch)\b.*\boff\b|\blights? out\b"),
)
# The device an intent implies when the utterance names none.
DEFAULT_DEVICE = {"SetTemperature": "thermostat", "Lock": "lock", "Unlock": "lock",
                  "GoodNight": "scene", "GoodMorning": "scene"}
KNOWN_INTENTS = {name for name, _ in INTENTS}


class UnknownIntent(Exception):
    """The utterance matches no rule; the message says what was heard."""


def find_device(text):
    # Longest names first, so "front door" wins over "door".
    for name in sorted(DEVICES, key=len, reverse=True):
        if re.search(r"\b" + re.escape(name) + r"\b", text):
            return DEVICES[name], name
    return None, None


def find_room(text, spoken_device):
    for room in ROOMS:
        if re.search(r"\b" + room + r"\b", text):
            return room
    if spoken_device in ("front door", "back door"):
        return spoken_device.split()[0]
    return None


def understand(text):
    clean = re.sub(r"[^\w°.\- ]+", " ", text.lower()).strip()
    clean = re.sub(r"^(alexa|computer|hey)\s+", "", clean)
    for intent, pattern in INTENTS:
        if re.search(pattern, clean):
            break
    else:
        raise UnknownIntent("I heard '%s' but know no request like it" % text)
    device, spoken = find_device(clean)
    device = DEFAULT_DEVICE.get(intent) if intent in ("GoodNight", "GoodMorning") else (
        device or DEFAULT_DEVICE.get(intent))
    if device is None:
        raise UnknownIntent("I heard '%s' but not which device" % text)
    slots = {}
    room = find_room(clean, spoken)
    if room:
        slots["room"] = room
    if intent == "SetTemperature":
        slots["value"] = float(re.search(r"(?:to|at)\s+(-?\d+(?:\.\d+)?)", clean).group(1))
    if device == "light" and re.search(r"\ball( the)? lights\b|\beverywhere\b", clean):
        slots["room"] = "all"
    return {"intent": intent, "device": device, "slots": slots, "text": text}


def handle(event):
    event = event or {}
    if "intent" in event:  # resolved by the frontend from an Alexa directive: check it only
        if event["intent"] not in KNOWN_INTENTS:
            raise UnknownIntent("no intent named '%s'" % event["intent"])
        return {"intent": event["intent"], "device": event.get("device") or DEFAULT_DEVICE.get(event["intent"]),
                "slots": event.get("slots") or {}, "text": event.get("text", "")}
    text = event.get("text")
    if not isinstance(text, str) or not text.strip():
        raise UnknownIntent("I heard nothing")
    return understand(text)
