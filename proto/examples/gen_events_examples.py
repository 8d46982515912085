#!/usr/bin/env python3
"""Regenerates proto/examples/events.json: "events" examples that
tests/proto_examples.py sends.

    python3 proto/examples/gen_events_examples.py [SKINNER]

The skeleton and its events are case 24 of tests/conformance/events.jsonl
(tests/oracle/babylon_events.mjs: Babylon's Skeleton.serialize() with the
bones' "events"); each expected answer is `skinner eval`'s for the same
pose, written only when its events are the ones Babylon fired (exit 1
otherwise). Not run by the tests (they read the committed file).
"""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
SKINNER = sys.argv[1] if len(sys.argv) > 1 else os.path.join(TOP, "skinner")

with open(os.path.join(TOP, "tests", "conformance", "events.jsonl")) as f:
    case = json.loads(f.readlines()[24])
skel = case["case"]["skeleton"]
pose = dict(case["case"]["ops"][0])
del pose["op"]
out = subprocess.run([SKINNER, "eval"], input=json.dumps(case["case"]), capture_output=True, text=True, check=True)
answer = {"results": json.loads(out.stdout)["results"]}  # /pose answers no "order"
if [r["events"] for r in answer["results"]] != case["expected"]:
    sys.exit("skinner eval's events are not Babylon's: not written")

H = {"Content-Type": "application/json"}
bad = json.loads(json.dumps(skel))
bad["bones"][0]["animation"]["events"] = [{"name": "", "frame": 3}]
examples = [
    {"name": "put-events", "description": "A Babylon skeleton whose bones' animations carry \"events\" (skinnerd's extension: Animation.serialize() writes none).",
     "method": "PUT", "path": "/v1/skeletons/events", "headers": H, "body": skel, "request_schema": "skeleton.json",
     "status": 201, "response_schema": "skeleton-created.json"},
    {"name": "get-clip-events", "description": "The clip's detail lists its event table in firing order.",
     "method": "GET", "path": "/v1/skeletons/events/animations/r", "status": 200, "response_schema": "clip.json"},
    {"name": "pose-events", "description": "\"events\": true: each result lists the events Babylon fires at that step of a playback (bit for bit: tests/oracle/conformance_events.sh).",
     "method": "POST", "path": "/v1/skeletons/events/pose", "headers": H, "body": pose, "request_schema": "pose.json",
     "status": 200, "response_schema": "batch-result.json", "response_body": answer},
    {"name": "put-events-bad-name", "method": "PUT", "path": "/v1/skeletons/events-bad", "status": 422,
     "response_schema": "problem.json", "response_content_type": "application/problem+json",
     "description": "An event name is 1 to 63 bytes.", "expect_pointer": "/bones/0/animation/events/0/name",
     "headers": H, "body": bad, "request_schema": "skeleton.json"},
]
with open(os.path.join(HERE, "events.json"), "w") as f:
    json.dump({"description": "Babylon AnimationEvents on upload and per pose (docs/animation.md).", "examples": examples}, f, indent=1)
    f.write("\n")
