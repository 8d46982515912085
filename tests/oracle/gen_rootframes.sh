#!/bin/sh
# Regenerates tests/data/rootframes/*.json with Babylon 9.34 (npm install
# first): root motion per frame (babylon_rootframes.mjs), the cases
# tests/rootframes.py sends. With a directory argument, writes there instead
# (conformance: the committed files must be Babylon's bytes still).
set -e
cd "$(dirname "$0")"
d=../data
out=${1:-$d/rootframes}
mkdir -p "$out"
node babylon_rootframes.mjs $d/Fox.glb '[
 {"clip":"Walk","options":{},"fps":30,"frames":40,"loop":true},
 {"clip":"Run","options":{"source":"root","minimumTravel":0.05,"directionSnapAngle":0.3},"fps":24,"frames":40,"loop":true},
 {"clip":"Survey","options":{},"fps":10,"frames":40,"loop":false}]' > "$out/Fox.json"
node babylon_rootframes.mjs $d/CesiumMan.glb '[
 {"clip":"animation0","options":{},"fps":30,"frames":30,"loop":true},
 {"clip":"animation0","options":{"extractRotation":true,"samplesPerSecond":24},"fps":24,"frames":30,"loop":true}]' > "$out/CesiumMan.json"
node babylon_rootframes.mjs $d/mannequiny-0.3.0.glb '[
 {"clip":"dash","options":{},"fps":24,"frames":30,"loop":true},
 {"clip":"idle_to_fight","options":{},"fps":30,"frames":20,"loop":true},
 {"clip":"walk","options":{"extractRotation":true,"extractLateralMotion":true,"samplesPerSecond":30},"fps":30,"frames":40,"loop":true},
 {"clip":"air_jump_anticipation","options":{"extractRotation":true},"fps":30,"frames":20,"loop":true}]' > "$out/mannequiny-0.3.0.json"
node babylon_rootframes.mjs $d/gen/walker.glb '[
 {"clip":"walk","options":{},"fps":30,"frames":45,"loop":true},
 {"clip":"walk_root","options":{"directionSnapAngle":0.1},"fps":24,"frames":40,"loop":true},
 {"clip":"turn_walk","options":{},"fps":30,"frames":70,"loop":true},
 {"clip":"step_walk","options":{},"fps":30,"frames":40,"loop":true},
 {"clip":"walk_root","options":{},"fps":20,"frames":30,"loop":false},
 {"clip":"cubic_walk","options":{},"fps":30,"frames":45,"loop":true},
 {"clip":"cubic_walk","options":{"extractLateralMotion":true},"fps":24,"frames":30,"loop":false},
 {"clip":"cubic_turn","options":{},"fps":30,"frames":70,"loop":true},
 {"clip":"cubic_turn","options":{"extractRotation":false},"fps":30,"frames":40,"loop":true}]' > "$out/walker.json"
