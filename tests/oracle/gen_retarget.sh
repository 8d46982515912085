#!/bin/sh
# Regenerates tests/data/retarget/*.json with Babylon 9.34 (npm install first):
# AnimatorAvatar.retargetAnimationGroup between different real skeletons.
set -e
cd "$(dirname "$0")"
d=../data
cm='"Skeleton_torso_joint_1":"torso_joint_1","Skeleton_torso_joint_2":"torso_joint_2","Skeleton_neck_joint_1":"neck_joint_1","Skeleton_neck_joint_2":"neck_joint_2","Skeleton_arm_joint_L__4_":"arm_joint_L_1","Skeleton_arm_joint_L__3_":"arm_joint_L_2","Skeleton_arm_joint_L__2_":"arm_joint_L_3","Skeleton_arm_joint_R":"arm_joint_R_1","Skeleton_arm_joint_R__2_":"arm_joint_R_2","Skeleton_arm_joint_R__3_":"arm_joint_R_3"'
rm='"Body":"pelvis","Abdomen":"spine_01","Torso":"spine_02","Neck":"neck_01","Head":"head","Shoulder.L":"clavicle.l","UpperArm.L":"upperarm.l","LowerArm.L":"lowerarm.l","Palm2.L":"hand.l","Shoulder.R":"clavicle.r","UpperArm.R":"upperarm.r","LowerArm.R":"lowerarm.r","Palm2.R":"hand.r","UpperLeg.L":"thigh.l","LowerLeg.L":"calf.l","Foot.L":"foot.l","UpperLeg.R":"thigh.r","LowerLeg.R":"calf.r","Foot.R":"foot.r"'
out=${OUT:-$d/retarget} # OUT=DIR: elsewhere, to compare
run() { node babylon_retarget.mjs "$d/$2" "$d/$3" "$4" "$5" > "$out/$1.json"; }
run cesium-rigged CesiumMan.glb RiggedFigure.glb 0 "{\"mapNodeNames\":{$cm}}"
run cesium-rigged-ground CesiumMan.glb RiggedFigure.glb 0 "{\"mapNodeNames\":{$cm},\"rootNodeName\":\"Skeleton_torso_joint_1\",\"groundReferenceNodeName\":\"leg_joint_L_5\",\"fixGroundReference\":true,\"fixAnimations\":true,\"checkHierarchy\":true,\"animationGroupName\":\"CesiumWalk\"}"
run robot-mannequiny RobotExpressive.glb mannequiny-0.3.0.glb Walking "{\"mapNodeNames\":{$rm}}"
run robot-mannequiny-root RobotExpressive.glb mannequiny-0.3.0.glb Walking "{\"mapNodeNames\":{$rm},\"rootNodeName\":\"Body\",\"groundReferenceNodeName\":\"Foot.L\"}"
run robot-mannequiny-ground RobotExpressive.glb mannequiny-0.3.0.glb Running "{\"mapNodeNames\":{$rm},\"rootNodeName\":\"Body\",\"groundReferenceNodeName\":\"Foot.R\",\"fixGroundReference\":true,\"fixRootPosition\":false,\"groundReferenceVerticalAxis\":\"Y\"}"
run robot-mannequiny-raw RobotExpressive.glb mannequiny-0.3.0.glb Walking "{\"mapNodeNames\":{$rm},\"retargetAnimationKeys\":false}"
# LowerLeg.R unmapped; RobotExpressive's meshes are named as their joints
# (LowerLeg.L, Foot.R...): checkHierarchy finds two nodes for those bones.
rmh=$(printf '%s' "$rm" | sed 's/,"LowerLeg.R":"calf.r"//')
run robot-mannequiny-hierarchy RobotExpressive.glb mannequiny-0.3.0.glb Punch "{\"mapNodeNames\":{$rmh},\"fixAnimations\":true,\"checkHierarchy\":true}"
run mannequiny-cesium mannequiny-0.3.0.glb CesiumMan.glb run "{\"mapNodeNames\":{\"pelvis\":\"Skeleton_torso_joint_1\",\"spine_01\":\"Skeleton_torso_joint_2\",\"spine_02\":\"torso_joint_3\",\"neck_01\":\"Skeleton_neck_joint_1\",\"head\":\"Skeleton_neck_joint_2\",\"thigh.l\":\"leg_joint_L_1\",\"calf.l\":\"leg_joint_L_2\",\"foot.l\":\"leg_joint_L_3\",\"thigh.r\":\"leg_joint_R_1\",\"calf.r\":\"leg_joint_R_2\",\"foot.r\":\"leg_joint_R_3\"}}"
# Babylon-format targets (bones without transform nodes), written from the
# glTF skeletons by babylon_skeleton_of.mjs.
for f in mannequiny-0.3.0 CesiumMan RiggedFigure; do node babylon_skeleton_of.mjs "$d/$f.glb" > "$out/$f-babylon.json"; done
run robot-mannequiny-babylon RobotExpressive.glb retarget/mannequiny-0.3.0-babylon.json Walking "{\"mapNodeNames\":{$rm}}"
run cesium-rigged-babylon CesiumMan.glb retarget/RiggedFigure-babylon.json 0 "{\"mapNodeNames\":{$cm},\"fixAnimations\":true,\"checkHierarchy\":true}"
# The nodes Babylon's loader puts below __root__ (checkHierarchy's search).
node babylon_scene_nodes.mjs "$d"/*.glb > "$out/scene-nodes.txt"
