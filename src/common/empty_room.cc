// Source of a room that has no code yet; see minik8s_room() in CMakeLists.txt.
