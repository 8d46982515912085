#!/bin/sh
# Retargeting against Babylon 9.34 in Node, generated cases (issue 34).
#
#   tests/oracle/conformance_retarget.sh [CHECK_SK_RETARGET TESTS_DIR [SEED] [COUNT]]
#
# In make check (no arguments): ./tests/check_sk_retarget and $SK_TEST_DATA.
# Draws COUNT (default 4) cases with SEED (default: time based, printed): a
# pair of real skeletons with its name map (entries dropped at random), a
# clip of the source and option sets (fixAnimations, checkHierarchy,
# retargetAnimationKeys, root and ground fixing with a vertical axis; the
# target now and then as a Babylon-format skeleton, data/retarget/*-babylon.json), has
# Babylon answer each (babylon_retarget.mjs), and runs CHECK_SK_RETARGET on
# them with SK_RT_CASES: every key and sampled pose bit for bit.
# Exit 77 (skipped) without node or the pinned Babylon (npm install in tests/oracle).
set -eu
check=$(cd "$(dirname "${1:-./tests/check_sk_retarget}")" && pwd)/$(basename "${1:-check_sk_retarget}")
tests=$(cd "${2:-${SK_TEST_DATA:-tests}}" && pwd)
seed=${3:-$(( $(date +%s) % 4294967296 ))}
count=${4:-4}
here=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null 2>&1 && [ -d "$here/node_modules/@babylonjs/core" ] || { echo "no node or Babylon: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "conformance_retarget: seed $seed, $count cases"
d=$tests/data
cd "$here"
cases=""
i=0
while [ $i -lt $count ]; do
    args=$(node -e '
let s = (Number(process.argv[1]) + 7919 * Number(process.argv[2])) >>> 0;
const r = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296);
const pick = (a) => a[Math.floor(r() * a.length)];
const cm = {Skeleton_torso_joint_1: "torso_joint_1", Skeleton_torso_joint_2: "torso_joint_2", Skeleton_neck_joint_1: "neck_joint_1",
  Skeleton_neck_joint_2: "neck_joint_2", Skeleton_arm_joint_L__4_: "arm_joint_L_1", Skeleton_arm_joint_L__3_: "arm_joint_L_2",
  Skeleton_arm_joint_L__2_: "arm_joint_L_3", Skeleton_arm_joint_R: "arm_joint_R_1", Skeleton_arm_joint_R__2_: "arm_joint_R_2",
  Skeleton_arm_joint_R__3_: "arm_joint_R_3"};
const rev = Object.fromEntries(Object.entries(cm).map(([a, b]) => [b, a]));
const rm = {Body: "pelvis", Abdomen: "spine_01", Torso: "spine_02", Neck: "neck_01", Head: "head", "Shoulder.L": "clavicle.l",
  "UpperArm.L": "upperarm.l", "LowerArm.L": "lowerarm.l", "Palm2.L": "hand.l", "Shoulder.R": "clavicle.r", "UpperArm.R": "upperarm.r",
  "LowerArm.R": "lowerarm.r", "Palm2.R": "hand.r", "UpperLeg.L": "thigh.l", "LowerLeg.L": "calf.l", "Foot.L": "foot.l",
  "UpperLeg.R": "thigh.r", "LowerLeg.R": "calf.r", "Foot.R": "foot.r"};
const mc = {pelvis: "Skeleton_torso_joint_1", spine_01: "Skeleton_torso_joint_2", spine_02: "torso_joint_3", neck_01: "Skeleton_neck_joint_1",
  head: "Skeleton_neck_joint_2", "thigh.l": "leg_joint_L_1", "calf.l": "leg_joint_L_2", "foot.l": "leg_joint_L_3",
  "thigh.r": "leg_joint_R_1", "calf.r": "leg_joint_R_2", "foot.r": "leg_joint_R_3"};
const pairs = [
  ["CesiumMan.glb", "RiggedFigure.glb", cm, 1, "Skeleton_torso_joint_1", ["leg_joint_L_5", "leg_joint_R_5", "leg_joint_L_3"]],
  ["RiggedFigure.glb", "CesiumMan.glb", rev, 1, "torso_joint_1", ["leg_joint_L_5", "leg_joint_R_3"]],
  ["RobotExpressive.glb", "mannequiny-0.3.0.glb", rm, 14, "Body", ["Foot.L", "Foot.R"]],
  ["mannequiny-0.3.0.glb", "CesiumMan.glb", mc, 11, "pelvis", ["foot.l", "foot.r"]],
];
const [src, dst, map, clips, root, grounds] = pick(pairs);
const o = {mapNodeNames: {}};
const ground = pick(grounds);
for (const [k, v] of Object.entries(map)) if (r() < 0.85 || k === root || k === ground) o.mapNodeNames[k] = v;
if (r() < 0.3) o.fixAnimations = true;
if (r() < 0.15) o.retargetAnimationKeys = false;
if (r() < 0.25) o.checkHierarchy = true;
else if (r() < 0.6) {
  o.rootNodeName = root;
  o.groundReferenceNodeName = ground;
  if (r() < 0.3) o.fixRootPosition = false;
  if (r() < 0.5) o.fixGroundReference = true;
  if (r() < 0.3) o.groundReferenceVerticalAxis = pick(["X", "Y", "Z"]);
}
const clip = Math.floor(r() * clips);
// Drawn last, so that a seed draws the glTF cases it drew before: the
// target as a Babylon-format skeleton (no root fixing there).
const bjs = o.groundReferenceNodeName === undefined && r() < 0.3;
process.stdout.write([src, bjs ? "retarget/" + dst.replace(/\.glb$/, "-babylon.json") : dst, clip, JSON.stringify(o)].join("\t"));' "$seed" "$i")
    src=$(printf '%s' "$args" | cut -f1)
    dst=$(printf '%s' "$args" | cut -f2)
    clip=$(printf '%s' "$args" | cut -f3)
    opts=$(printf '%s' "$args" | cut -f4)
    node babylon_retarget.mjs "$d/$src" "$d/$dst" "$clip" "$opts" > "$tmp/case$i.json"
    cases="$cases $tmp/case$i.json"
    i=$((i + 1))
done
cd "$tests"
SK_TEST_DATA="$tests" SK_RT_CASES="$cases" "$check"
