#!/usr/bin/env python3
"""Render a terminal capture with colours (tmux capture-pane -e) to a PNG.

usage: tools/ansi-screenshot.py CAPTURE.ansi OUT.png [--cols N] [--rows N]

For docs only (docs/console-screen.png): it draws every run of equally styled
cells with ImageMagick's `convert` (Debian package imagemagick, which is not in
tools/deps.sh because no test needs it) and the DejaVu Sans Mono font.
"""
import argparse
import re
import subprocess
import sys

PALETTE = ["#1c1c1c", "#d75f5f", "#5faf5f", "#d7af5f", "#5f87d7", "#af5fd7", "#5fafd7", "#d0d0d0",
           "#4e4e4e", "#ff8787", "#87d787", "#ffd787", "#87afff", "#d787ff", "#87d7ff", "#ffffff"]
DEFAULT_FG, DEFAULT_BG = "#d0d0d0", "#121212"
CELL_W, CELL_H, POINTS = 8.4, 17, 14
SGR = re.compile(r"\x1b\[([0-9;]*)m")


class Style:
    def __init__(self):
        self.fg = self.bg = None
        self.bold = self.reverse = False

    def key(self):
        return (self.fg, self.bg, self.bold, self.reverse)

    def colours(self):
        fg = self.fg if self.fg is not None else DEFAULT_FG
        bg = self.bg if self.bg is not None else DEFAULT_BG
        if self.bold and self.fg in PALETTE[:8]:
            fg = PALETTE[PALETTE.index(self.fg) + 8]
        return (bg, fg) if self.reverse else (fg, bg)


def colour_256(n):
    if n < 16:
        return PALETTE[n]
    if n >= 232:
        level = 8 + (n - 232) * 10
        return "#%02x%02x%02x" % (level, level, level)
    n -= 16
    steps = [0, 95, 135, 175, 215, 255]
    return "#%02x%02x%02x" % (steps[n // 36], steps[(n // 6) % 6], steps[n % 6])


SIMPLE_SGR = {1: ("bold", True), 22: ("bold", False), 7: ("reverse", True), 27: ("reverse", False),
              39: ("fg", None), 49: ("bg", None)}


def basic_colour(code):
    """30-37/90-97 (fg) and 40-47/100-107 (bg): ("fg"|"bg", colour) or None."""
    bright = code >= 90
    base = code - 60 if bright else code
    if 30 <= base <= 37:
        return "fg", PALETTE[base - 30 + 8 * bright]
    if 40 <= base <= 47:
        return "bg", PALETTE[base - 40 + 8 * bright]
    return None


def apply_sgr(style, params):
    codes = [int(p) if p else 0 for p in params.split(";")] if params else [0]
    i = 0
    while i < len(codes):
        c = codes[i]
        if c == 0:
            style.__init__()
        elif c in SIMPLE_SGR:
            setattr(style, *SIMPLE_SGR[c])
        elif basic_colour(c):
            setattr(style, *basic_colour(c))
        elif c in (38, 48) and i + 2 < len(codes) and codes[i + 1] == 5:
            setattr(style, "fg" if c == 38 else "bg", colour_256(codes[i + 2]))
            i += 2
        i += 1


def runs(lines):
    """(row, col, text, style key) for each run of equally styled cells."""
    style = Style()
    for row, line in enumerate(lines):
        col, pos = 0, 0
        current, start = [], 0
        for m in list(SGR.finditer(line)) + [None]:
            end = m.start() if m else len(line)
            text = line[pos:end]
            if text:
                yield row, col, text, style.key(), style.colours()
                col += len(text)
            if m:
                apply_sgr(style, m.group(1))
                pos = m.end()


def mvg_text(text):
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'").replace("%", "%%") + "'"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("capture")
    ap.add_argument("out")
    ap.add_argument("--cols", type=int, default=120)
    ap.add_argument("--rows", type=int, default=40)
    args = ap.parse_args()
    with open(args.capture, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")[: args.rows]
    width, height = int(args.cols * CELL_W) + 16, args.rows * CELL_H + 16
    draw = ["font-size %d" % POINTS]
    for row, col, text, _, (fg, bg) in runs(lines):
        x, y = 8 + col * CELL_W, 8 + row * CELL_H
        if bg != DEFAULT_BG:
            draw.append("fill '%s' rectangle %.1f,%d %.1f,%d" % (bg, x, y, x + len(text) * CELL_W, y + CELL_H))
        if text.strip():
            draw.append("fill '%s' text %.1f,%d %s" % (fg, x, y + CELL_H - 4, mvg_text(text)))
    # Inline: Debian's ImageMagick policy refuses "-draw @file".
    subprocess.run(["convert", "-size", "%dx%d" % (width, height), "xc:" + DEFAULT_BG,
                    "-font", "DejaVu-Sans-Mono", "-draw", "\n".join(draw), args.out], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
