#!/bin/sh
# Regenerates tests/data/rootmotion/*.json with Babylon 9.34 (npm install first).
set -e
cd "$(dirname "$0")"
d=../data
node babylon_rootmotion.mjs $d/Fox.glb > $d/rootmotion/Fox.json
node babylon_rootmotion.mjs $d/Fox.glb '{"source":1,"minimumTravel":0.05,"directionSnapAngle":0.3}' > $d/rootmotion/Fox-opts.json
node babylon_rootmotion.mjs $d/CesiumMan.glb > $d/rootmotion/CesiumMan.json
node babylon_rootmotion.mjs $d/mannequiny-0.3.0.glb > $d/rootmotion/mannequiny-0.3.0.json
node babylon_rootmotion.mjs $d/mannequiny-0.3.0.glb '{"extractRotation":true,"extractLateralMotion":true,"samplesPerSecond":30}' > $d/rootmotion/mannequiny-opts.json
