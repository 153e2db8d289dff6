#!/usr/bin/env python3
"""Compare two kernel .config files of one tree and say where they differ.

Each symbol whose value differs is placed by the Kconfig file that
defines it and classed:
  allowed  defined under one of the --allow folders (default drivers/ and
           fs/: the guest hardware and filesystems configs/trim.config
           switches off)
  hidden   defined elsewhere but without a prompt: nobody sets it, a
           selected or defaulted symbol that follows the others
  core     defined elsewhere with a prompt: an option of the code the rig
           measures (kernel/, mm/, net/, crypto/, lib/, arch/ ...)
Exit: 0 no core symbol differs, 1 one does (listed), 2 bad usage or an
unreadable file.
"""
import argparse
import collections
import os
import re
import sys

CONFIG_RE = re.compile(r'\s*(?:menu)?config\s+(\w+)\s*$')
PROMPT_RE = re.compile(r'\s*(?:(?:bool|tristate|string|hex|int)\s+"|prompt\s+")')
BLOCK_END_RE = re.compile(r'\s*(?:choice|endchoice|menu\s|endmenu|if\s|endif|source\s|comment\s)')


def kconfig_symbols(src):
    """{symbol: (first defining Kconfig path, has a prompt somewhere)}"""
    loc, prompt = {}, collections.defaultdict(bool)
    for root, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if not d.startswith('.')]
        for f in files:
            if not f.startswith('Kconfig'):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, src)
            cur = None
            with open(path, errors='replace') as fh:
                for line in fh:
                    m = CONFIG_RE.match(line)
                    if m:
                        cur = m.group(1)
                        loc.setdefault(cur, rel)
                    elif BLOCK_END_RE.match(line):
                        cur = None
                    elif cur and PROMPT_RE.match(line):
                        prompt[cur] = True
    return {s: (p, prompt[s]) for s, p in loc.items()}


def read_config(path):
    vals = {}
    with open(path) as fh:
        for line in fh:
            m = re.match(r'CONFIG_(\w+)=(.*)$', line)
            if m:
                vals[m.group(1)] = m.group(2)
    return vals


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split('\n')[0],
        epilog='Example: net-tests/kconfigdiff.py ~/.cache/skb-tailroom/src/linux-KEY '
               'untrimmed/.config trimmed/.config')
    ap.add_argument('src', help='the kernel tree both configs are of')
    ap.add_argument('old', help='the reference .config')
    ap.add_argument('new', help='the .config to compare with it')
    ap.add_argument('--allow', action='append', metavar='DIR',
                    help='a folder whose symbols may differ (again for more; '
                         'default: drivers and fs)')
    a = ap.parse_args()
    allow = [d.rstrip('/') + '/' for d in (a.allow or ['drivers', 'fs'])]
    try:
        old, new = read_config(a.old), read_config(a.new)
    except OSError as e:
        print(f'kconfigdiff.py: {e}', file=sys.stderr)
        return 2
    if not os.path.isdir(a.src):
        print(f'kconfigdiff.py: {a.src} is not a folder', file=sys.stderr)
        return 2
    syms = kconfig_symbols(a.src)
    classes = collections.defaultdict(list)
    for s in sorted(set(old) | set(new)):
        if old.get(s) == new.get(s):
            continue
        path, has_prompt = syms.get(s, ('?', True))
        if any(path.startswith(d) for d in allow):
            cls = 'allowed'
        elif not has_prompt:
            cls = 'hidden'
        else:
            cls = 'core'
        classes[cls].append(f"{s} {old.get(s, '-')}->{new.get(s, '-')} ({path})")
    for cls in ('allowed', 'hidden', 'core'):
        print(f'{cls}: {len(classes[cls])}')
        for line in classes[cls]:
            print(f'  {line}')
    return 1 if classes['core'] else 0


if __name__ == '__main__':
    sys.exit(main())
