#!/usr/bin/env python3
"""fs.py - file system and process probes for tests/cli/sandbox_escape.sh,
run inside a sluice sandbox.  Each argument is one probe and prints one
line "PROBE RESULT", RESULT being "OK ..." or the errno name:

  read:PATH              open and read; "OK <first line>"
  list:PATH              the names in a folder, comma-separated
  write:PATH             create (or truncate) and write a few bytes
  mkdir:PATH             make a folder
  link:SRC:DST           a hard link DST to SRC
  symread:TARGET         a symlink in the working folder pointing at TARGET,
                         then read through it (a folder is listed)
  chmod:OCTAL:PATH       change a mode
  kill:PID:SIG           send a signal
  exists:PATH            "yes" or "no" (a dangling link counts as there)
  fields:PATH            the first ':'-separated field of each line
  fill:PATH:MIB          write MIB MiB in 1 MiB pieces; "OK MIB" or
                         "ENOSPC after N" (N whole MiB written)
  files:N                open /dev/null N times; "OK N" or "EMFILE after N"
"""
import errno
import os
import sys

n = 0


def ename(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def read(path):
    if os.path.isdir(path):
        return "OK " + ",".join(sorted(os.listdir(path)))
    with open(path, "rb") as f:
        data = f.read(256)
    lines = data.decode("utf-8", "replace").splitlines()
    return "OK " + (lines[0] if lines else "(empty)")


def probe(arg):
    global n
    kind, _, rest = arg.partition(":")
    try:
        if kind == "read":
            return read(rest)
        if kind == "list":
            return "OK " + ",".join(sorted(os.listdir(rest)))
        if kind == "write":
            with open(rest, "w") as f:
                f.write("sluice-escape\n")
            return "OK"
        if kind == "mkdir":
            os.mkdir(rest)
            return "OK"
        if kind == "link":
            src, _, dst = rest.partition(":")
            os.link(src, dst)
            return "OK"
        if kind == "symread":
            n += 1
            name = "escape-link-%d" % n
            os.symlink(rest, name)
            return read(name)
        if kind == "chmod":
            mode, _, path = rest.partition(":")
            os.chmod(path, int(mode, 8))
            return "OK"
        if kind == "kill":
            pid, _, sig = rest.partition(":")
            os.kill(int(pid), int(sig))
            return "OK"
        if kind == "fields":
            with open(rest) as f:
                return "OK " + ",".join(l.split(":")[0] for l in f.read().splitlines())
        if kind == "fill":
            path, _, mib = rest.rpartition(":")
            done = 0
            try:
                with open(path, "wb", buffering=0) as f:
                    for _ in range(int(mib)):
                        f.write(b"\0" * (1 << 20))
                        done += 1
            except OSError as e:
                return "%s after %d" % (ename(e), done)
            return "OK %d" % done
        if kind == "files":
            held = []
            try:
                for _ in range(int(rest)):
                    held.append(open("/dev/null"))
            except OSError as e:
                return "%s after %d" % (ename(e), len(held))
            return "OK %d" % len(held)
        if kind == "exists":
            return "yes" if os.path.lexists(rest) else "no"
        return "UNKNOWN"
    except OSError as e:
        return ename(e)


for a in sys.argv[1:]:
    print(a, probe(a), flush=True)
