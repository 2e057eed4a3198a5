"""What the benchmark scripts (bench.py, serve.py) share."""

import shlex


def reproduce_line(wrapper, argv):
    """The command that runs the same benchmark again: the wrapper script with
    the given options, less --binary (the wrapper builds its own)."""
    cleaned, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "--binary":
            skip = True
            continue
        if a.startswith("--binary="):
            continue
        cleaned.append(a)
    return f"Reproduce: {wrapper} {shlex.join(cleaned)}".rstrip()
