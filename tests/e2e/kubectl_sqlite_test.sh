#!/usr/bin/env bash
# A user's kubectl session against a server on the embedded SQLite datastore.
BACKEND=sqlite
source "$(dirname "$0")/kubectl_scenario.sh"
