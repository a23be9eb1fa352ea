"""Keyword arguments as the command line's flags: ``max_num_seqs=64`` is ``--max-num-seqs 64``.

The commands parse the flags themselves (the same parser as ``gpuplan``), so an argument a
command does not take raises that command's own UsageError; nothing is re-declared here.
"""

import os

# Flags whose value is the word on or off rather than a switch.
_ON_OFF = {"enable-prefix-caching", "enable-chunked-prefill"}


def flag_name(key):
    """``max_num_seqs`` -> ``--max-num-seqs``; a trailing underscore (``with_``) is dropped."""
    return "--" + key.rstrip("_").replace("_", "-")


def value_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


def flags(options):
    """The command-line words for a dict of keyword arguments, in its order. None and False
    leave a flag out, True gives a switch (or ``on`` for the on/off flags), a list or tuple
    repeats the flag."""
    out = []
    for key, value in options.items():
        if value is None:
            continue
        flag = flag_name(key)
        if flag[2:] in _ON_OFF and isinstance(value, bool):
            out += [flag, "on" if value else "off"]
        elif value is True:
            out.append(flag)
        elif value is False:
            continue
        elif isinstance(value, (list, tuple)):
            for v in value:
                out += [flag, value_text(v)]
        else:
            out += [flag, value_text(value)]
    return out


def set_flags(changes):
    """``{"engine.max_num_seqs": 64}`` -> ``["--set", "engine.max_num_seqs=64"]``."""
    out = []
    for key, value in changes.items():
        out += ["--set", f"{key}={value_text(value)}"]
    return out
