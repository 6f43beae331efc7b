"""The skill's front end: what comes in becomes a request, and device states become an answer.

Two stages in one function (one cold start less per utterance than two functions):

stage "request" (the default), the workflow's first step. It accepts
  - a spoken request:        {"utterance": "turn on the kitchen light"}  (or "text")
  - an Alexa-style directive: {"directive": {"header": {"namespace": "Alexa.PowerController",
                               "name": "TurnOn", "correlationToken": "..."},
                               "endpoint": {"endpointId": "kitchen-light"}, "payload": {}}}
  - a schedule's CloudEvent (a Trigger): {"type": "minik8s.schedule", "id": ..., ...}, which
    starts the morning routine
and hands on {"text", "source"} for the NLU, with "intent", "device" and "slots" already set
when the directive or the schedule says them.

stage "respond", the last step: {"stage": "respond", "request", "nlu", "results"} (results: one
device state, or a list of them from a scene) -> {"speech", "intent", "devices"}, plus an
Alexa-style response event when the request was a directive.
"""
import time

# Alexa interfaces -> our intents.
DIRECTIVES = {
    ("Alexa.PowerController", "TurnOn"): "TurnOn",
    ("Alexa.PowerController", "TurnOff"): "TurnOff",
    ("Alexa.ThermostatController", "SetTargetTemperature"): "SetTemperature",
    ("Alexa.LockController", "Lock"): "Lock",
    ("Alexa.LockController", "Unlock"): "Unlock",
}
SCENES = {"GoodNight": "Good night: the lights are off, the front door is locked and the heating "
                       "is down to {night}.",
          "GoodMorning": "Good morning: the kitchen light is on and the heating is at {day}."}


class UnknownIntent(Exception):
    """A request the skill cannot read; the message says what was wrong."""


def endpoint_slots(endpoint_id):
    """'living-room-thermostat' -> ('thermostat', {'room': 'living room'})."""
    parts = endpoint_id.split("-")
    if len(parts) < 2 or parts[-1] not in ("light", "thermostat", "lock"):
        raise UnknownIntent("unknown endpoint '%s'" % endpoint_id)
    room = " ".join(parts[:-1])
    if parts[-1] == "lock" and room.endswith(" door"):
        room = room[: -len(" door")]
    return parts[-1], {"room": room}


def from_directive(directive):
    header = directive.get("header") or {}
    intent = DIRECTIVES.get((header.get("namespace"), header.get("name")))
    if intent is None:
        raise UnknownIntent("unsupported directive %s.%s" % (header.get("namespace"), header.get("name")))
    device, slots = endpoint_slots((directive.get("endpoint") or {}).get("endpointId", ""))
    if intent == "SetTemperature":
        slots["value"] = ((directive.get("payload") or {}).get("targetSetpoint") or {}).get("value")
    request = {"text": "", "source": "alexa", "intent": intent, "device": device, "slots": slots}
    if header.get("correlationToken"):
        request["correlationToken"] = header["correlationToken"]
    return request


def to_request(event):
    if not isinstance(event, dict):
        raise UnknownIntent("a request is a JSON object, not %s" % type(event).__name__)
    if "directive" in event:
        return from_directive(event["directive"])
    if event.get("type") == "minik8s.schedule":
        return {"text": "", "source": "schedule", "intent": "GoodMorning", "device": "scene",
                "slots": {}, "scheduleId": event.get("id")}
    text = event.get("utterance", event.get("text"))
    if not isinstance(text, str) or not text.strip():
        raise UnknownIntent("no utterance in the request")
    return {"text": text.strip(), "source": "voice"}


def describe(state):
    device = state.get("device")
    if device == "light":
        where = "all the lights are" if state.get("room") == "all" else "the %s light is" % state["room"]
        return "%s %s" % (where, state["power"].lower())
    if device == "thermostat":
        if state.get("mode") == "OFF":
            return "the heating in the %s is off" % state["room"]
        return "the %s is set to %g degrees" % (state["room"], state["targetSetpoint"])
    if device == "lock":
        return "the %s door is %s" % (state["door"], state["lockState"].lower())
    return "done"


def respond(event):
    results = event.get("results")
    states = results if isinstance(results, list) else [results]
    nlu = event.get("nlu") or {}
    request = event.get("request") or {}
    intent = nlu.get("intent")
    if intent in SCENES:
        temps = {s["room"]: s.get("targetSetpoint") for s in states if s.get("device") == "thermostat"}
        t = next(iter(temps.values()), None)
        speech = SCENES[intent].format(night="%g degrees" % t if t is not None else "night mode",
                                       day="%g degrees" % t if t is not None else "day mode")
    else:
        text = "; ".join(describe(s) for s in states)
        speech = "OK, " + text + "."
    answer = {"speech": speech, "intent": intent, "devices": states, "source": request.get("source")}
    if request.get("source") == "alexa":
        answer["event"] = {
            "header": {"namespace": "Alexa", "name": "Response", "payloadVersion": "3",
                       "correlationToken": request.get("correlationToken")},
            "context": {"properties": [{"name": k, "value": v, "timeOfSample": time.strftime(
                "%Y-%m-%dT%H:%M:%SZ", time.gmtime())} for s in states for k, v in s.items()
                if k in ("power", "targetSetpoint", "lockState", "mode")]},
        }
    return answer


def handle(event):
    if isinstance(event, dict) and event.get("stage") == "respond":
        return respond(event)
    return to_request(event)
