#!/usr/bin/env bash
# setup-for: all
# LangChain's agent-chat-ui, as a user runs it, for the real-browser test (tests/browser): the app's source is
# vendored in third_party/agent-chat-ui (langchain-ai/agent-chat-ui at the commit below, MIT), its packages come
# from npm pinned by its own pnpm-lock.yaml, and it is built for production into a cache outside the clone
# ($PLANWERK_CHAT_UI, default ~/.cache/planwerk/chat-ui), so a fresh clone on the same machine (CI) reuses it.
# Debian's Chromium (and the Inter font the app asks for) come from apt; Playwright drives that Chromium, so no
# browser is downloaded. Idempotent: rebuilds only when the vendored app or this script changed; prints what it
# installs and how long each part took.
set -euo pipefail
cd "$(dirname "$0")/../.."

CHAT_UI_COMMIT=fdc87e65307581b02898d33c62b3f285e56bd85b # third_party/agent-chat-ui/NOTICE.md says the same
PNPM_VERSION=10.5.1                                      # the app's own "packageManager"
SRC=third_party/agent-chat-ui
OUT=${PLANWERK_CHAT_UI:-${XDG_CACHE_HOME:-$HOME/.cache}/planwerk/chat-ui}
APT_PACKAGES=(chromium fonts-inter)
INTER_FONT=/usr/share/fonts/opentype/inter/Inter-Regular.otf
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 NEXT_TELEMETRY_DISABLED=1

started=$SECONDS
missing=()
for pkg in "${APT_PACKAGES[@]}"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
      || echo "  warning: could not install ${missing[*]} (the browser test will say so)"
    echo "  apt: ${missing[*]} in $((SECONDS - started)) s"
  else
    echo "  skipped apt ${missing[*]}: not root (sudo apt-get install ${missing[*]}); the browser test will say so"
  fi
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "  skipped agent-chat-ui: node/npm are not installed (apt-get install nodejs npm); the browser test will say so"
  exit 0
fi

stamp="$OUT/.planwerk-built"
want=$( (cat scripts/setup.d/60-chat-ui.sh; find "$SRC" -type f -print0 | LC_ALL=C sort -z | xargs -0 cat) \
  | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -d "$OUT/app/.next" ]; then
  echo "  agent-chat-ui ${CHAT_UI_COMMIT:0:7} already built in $OUT/app"
  exit 0
fi

rm -rf "$OUT/app"
mkdir -p "$OUT/app" "$OUT/tools"
cp -a "$SRC/." "$OUT/app/"
npm install --prefix "$OUT/tools" --no-audit --no-fund --loglevel=error "pnpm@$PNPM_VERSION" >/dev/null
pnpm=$(realpath "$OUT/tools/node_modules/.bin/pnpm")
store=$(realpath "$OUT")/pnpm-store
step=$SECONDS
(cd "$OUT/app" && "$pnpm" install --frozen-lockfile --store-dir "$store" --reporter=silent)
echo "  agent-chat-ui ${CHAT_UI_COMMIT:0:7}: pnpm install in $((SECONDS - step)) s"

# The app loads Inter through next/font/google, whose build fetches the font's stylesheet and files. Offline, Next
# reads them from NEXT_FONT_GOOGLE_MOCKED_RESPONSES instead: a module that answers every stylesheet URL with one
# @font-face naming Debian's Inter (or, without it, the bytes of the URL: the browser then falls back to its own).
font_src=$([ -f "$INTER_FONT" ] && echo "url($INTER_FONT) format('opentype')" || echo "url(offline.woff2) format('woff2')")
cat > "$OUT/app/fonts-offline.cjs" <<EOF
// Written by scripts/setup.d/60-chat-ui.sh: Next's font loader reads this instead of fetching stylesheets.
const face = (url) => {
  const family = (new URL(url).searchParams.get("family") || "Inter").split(":")[0].replace(/\+/g, " ");
  return \`/* latin */
@font-face {
  font-family: '\${family}';
  font-style: normal;
  font-weight: 100 900;
  font-display: swap;
  src: $font_src;
  unicode-range: U+0000-00FF, U+0131, U+0152-0153, U+02BB-02BC, U+02C6, U+02DA, U+02DC, U+2000-206F, U+20AC, U+2122;
}
\`;
};
module.exports = new Proxy({}, { get: (_, url) => (typeof url === "string" && url.includes("://") ? face(url) : undefined) });
EOF
step=$SECONDS
(cd "$OUT/app" && NEXT_FONT_GOOGLE_MOCKED_RESPONSES="$(pwd)/fonts-offline.cjs" "$pnpm" run build >build.log 2>&1) || {
  tail -40 "$OUT/app/build.log"
  echo "  warning: agent-chat-ui's next build failed (log: $OUT/app/build.log); the browser test will say so"
  exit 0
}
echo "  agent-chat-ui ${CHAT_UI_COMMIT:0:7}: next build (production) in $((SECONDS - step)) s"
echo "$want" > "$stamp"
echo "  agent-chat-ui built in $OUT/app in $((SECONDS - started)) s in all"
