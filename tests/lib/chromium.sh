# Headless Chromium for the HTML pages the tools write (sourced by the
# profile report and graph page tests). Pages are local files; nothing is
# fetched. Each call gets a fresh profile directory.
#   chromium_page_test DIR        -> skips the test (exit 77) when chromium is
#                                    not installed, enters a fresh DIR, and
#                                    proves the console check sees a script error
#   fail MESSAGE                  -> prints FAIL: MESSAGE, exits 1
#   chromium_render URL           -> dom.html (DOM after the scripts ran),
#                                    console.txt (console errors, empty = none)
#   chromium_screenshot URL PNG [WxH]
#   png_drawn_fraction PNG        -> prints the fraction of pixels that are
#                                    not the top-left (background) color

fail() { echo "FAIL: $*" >&2; exit 1; }

_chromium() {
  local profile rc=0
  profile=$(mktemp -d)
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --hide-scrollbars --user-data-dir="$profile" \
    "$@" || rc=$?
  rm -rf "$profile"
  return $rc
}

chromium_render() {
  _chromium --enable-logging=stderr --v=0 --dump-dom "$1" > dom.html 2> chromium.log || true
  grep -E "CONSOLE|Uncaught" chromium.log > console.txt || true
}

chromium_screenshot() {
  _chromium --window-size="${3:-1200,800}" --screenshot="$2" "$1" > /dev/null 2>&1 || true
  [ -s "$2" ]
}

png_drawn_fraction() {
  /usr/bin/python3 - "$1" << 'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, ihdr = 8, b"", None
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR": ihdr = struct.unpack(">IIBBBBB", body)
    if kind == b"IDAT": idat += body
    pos += 12 + length
width, height, depth, color, _, _, interlace = ihdr
assert depth == 8 and color in (2, 6) and interlace == 0, "unsupported PNG layout"
bpp = 3 if color == 2 else 4
raw, stride = zlib.decompress(idat), width * bpp
rows, prev = [], bytearray(stride)
for y in range(height):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(bytes(line))
    prev = line
background = rows[0][:bpp]
drawn = sum(1 for r in rows for x in range(0, stride, bpp) if r[x:x + bpp] != background)
print(f"{drawn / (width * height):.4f}")
PY
}

chromium_page_test() {
  command -v chromium > /dev/null || { echo "chromium not installed: skipped"; exit 77; }
  rm -rf "$1" && mkdir -p "$1"
  cd "$1"
  # Control: a script error shows up in the console log.
  printf '<!DOCTYPE html><html><body><script>undefinedFunction();</script></body></html>\n' > broken.html
  chromium_render "file://$1/broken.html"
  [ -s console.txt ] || fail "the console check does not see a script error: $(tail -5 chromium.log)"
}
