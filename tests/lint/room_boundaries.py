#!/usr/bin/env python3
"""Room boundaries: every #include of another room under src/ must be a room the including
room's CMake target declares (directly or through the rooms it declares), nothing may include
cli/, and every room a target declares must be used by it. The rooms and their dependencies are
read from src/CMakeLists.txt (minik8s_room(name minik8s_dep ...)); see ARCHITECTURE.md, rooms.

  tests/lint/room_boundaries.py [SOURCE_DIR]     exit 1 and one line per violation
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
src = os.path.join(root, "src")

cmake = open(os.path.join(src, "CMakeLists.txt")).read()
declared = {}
for m in re.finditer(r"minik8s_room\((\w+)([^)]*)\)", cmake):
    declared[m.group(1)] = set(re.findall(r"minik8s_(\w+)", m.group(2)))

def closure(room, seen=None):
    seen = set() if seen is None else seen
    for dep in declared.get(room, ()):
        if dep not in seen:
            seen.add(dep)
            closure(dep, seen)
    return seen

rooms = {d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))}
include = re.compile(r'^\s*#\s*include\s+"([^"/]+)/')
violations = []
used = {room: set() for room in declared}
for room in sorted(rooms):
    for dirpath, _, files in os.walk(os.path.join(src, room)):
        for name in sorted(files):
            if not name.endswith((".h", ".cc")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            for lineno, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                m = include.match(line)
                if not m or m.group(1) not in rooms or m.group(1) == room:
                    continue
                target = m.group(1)
                if room in used:
                    used[room].add(target)
                if target == "cli":
                    violations.append(f"{rel}:{lineno}: includes cli/, which nothing may depend on")
                elif room == "cli":
                    continue  # the binary links every room
                elif room not in declared:
                    violations.append(f"{rel}:{lineno}: room {room} has no minik8s_room() in src/CMakeLists.txt")
                elif target not in closure(room):
                    violations.append(
                        f"{rel}:{lineno}: {room} includes {target}/ but src/CMakeLists.txt does "
                        f"not declare minik8s_{target} for it (declared: "
                        f"{', '.join(sorted(declared[room])) or 'none'})")
for room, deps in sorted(declared.items()):
    for dep in sorted(deps):
        # A declared room is used when the room includes it, or includes a room built on it.
        if dep not in used[room] and not any(dep in closure(u) for u in used[room] if u in declared):
            violations.append(f"src/CMakeLists.txt: minik8s_{room} declares minik8s_{dep} but "
                              f"includes nothing from {dep}/")
for v in violations:
    print(v)
print(f"{len(violations)} room boundary violation(s) in {len(rooms)} rooms")
sys.exit(1 if violations else 0)
