#!/bin/bash
# End to end: the real agent CLIs (Claude Code, Codex CLI, Gemini CLI), offline against the
# scripted model server on loopback, with `pcpctl hook` installed as their permission hook and
# the headless compositor (pcp-harness) playing the user. The model asks each CLI to run one
# shell command; the test looks on disk and at the harness's JSON lines:
#   deny    `rm -rf ../victim` (outside the working folder: High), the user denies -> it exists
#   approve the same, the user approves                                             -> it is gone
#   ls      a harmless `ls`                                                          -> no prompt
# Codex uses `rm -r` (its own rule refuses any forced rm before a hook is asked) and can only
# object in PreToolUse: its "approve" is the hook saying nothing. Gemini can only deny or pass.
#
# Usage: e2e.sh [claude|codex|gemini]...       (default: all three)
# Env: PCP_HARNESS, PCPCTL (binaries), AGENTS_BIN (folder with claude, codex, gemini),
#      KEEP=1 keeps the scratch folder. Prints one line per case and "N passed, M failed";
#      exits 1 if any failed or a CLI is missing.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
SERVER="$HERE/scripted_model_server.py"
: "${PCP_HARNESS:?path to the pcp-harness example binary}"
: "${PCPCTL:?path to pcpctl}"
: "${AGENTS_BIN:?folder holding claude, codex and gemini}"

WHICH=("$@")
[ ${#WHICH[@]} -eq 0 ] && WHICH=(claude codex gemini)
BASE_PATH="$AGENTS_BIN:/usr/local/bin:/usr/bin:/bin"
WORK=$(mktemp -d /tmp/pcp-agent-e2e.XXXXXX)
PASS=0
FAIL=0
SERVER_PID=""

cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; fi
  if [ "${KEEP:-0}" = 1 ]; then echo "kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# new_case NAME USER_ACTION -> D with D/proj (the working folder), D/victim, D/home, the user
new_case() {
  D="$WORK/$1"
  mkdir -p "$D/home" "$D/proj" "$D/victim" "$D/tmp"
  echo "precious" > "$D/victim/file.txt"
  printf '[[answer]]\ncapability = "*"\ndo = "%s"\n' "$2" > "$D/user.toml"
}

start_server() {  # COMMAND
  python3 "$SERVER" --port-file "$D/port" --log "$D/requests.jsonl" --command "$1" \
    --idle 60 --lifetime 300 --max-requests 100 > "$D/server.out" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 100); do [ -s "$D/port" ] && break; sleep 0.05; done
  PORT=$(cat "$D/port")
}

stop_server() {
  kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""
}

# Runs D/cli.sh inside pcp-harness (which sets WAYLAND_DISPLAY and XDG_RUNTIME_DIR for it).
under_harness() {
  chmod +x "$D/cli.sh"
  timeout 180 "$PCP_HARNESS" --user "$D/user.toml" -- "$D/cli.sh" \
    > "$D/harness.jsonl" 2> "$D/harness.err"
}

# verdict NAME EXPECT(EXISTS|GONE) PROMPTS(yes|no) SECONDS
verdict() {
  local name=$1 expect=$2 want_prompt=$3 secs=$4 state prompts ok=1
  if [ -d "$D/victim" ]; then state=EXISTS; else state=GONE; fi
  prompts=$(grep -c '"event":"prompt"' "$D/harness.jsonl" 2>/dev/null); prompts=${prompts:-0}
  [ "$state" = "$expect" ] || ok=0
  if [ "$want_prompt" = yes ] && [ "$prompts" -lt 1 ]; then ok=0; fi
  if [ "$want_prompt" = no ] && [ "$prompts" -gt 0 ]; then ok=0; fi
  # The hook must actually have asked: a decision line for shell.exec.
  grep -q '"capability":"shell.exec"' "$D/harness.jsonl" 2>/dev/null || ok=0
  if [ $ok = 1 ]; then PASS=$((PASS + 1)); r=PASS; else FAIL=$((FAIL + 1)); r=FAIL; fi
  printf '%-4s %-16s victim=%-6s (want %-6s) prompts=%s %5.1fs\n' \
    "$r" "$name" "$state" "$expect" "$prompts" "$secs"
  if [ $r = FAIL ]; then
    tail -n 5 "$D/harness.err" | sed 's/^/     | /'
  fi
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

claude_case() {  # NAME USER_ACTION COMMAND EXPECT PROMPTS
  new_case "$1" "$2"
  printf '{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"%s hook claude-code","timeout":60}]}]}}\n' \
    "$PCPCTL" > "$D/settings.json"
  start_server "$3"
  cat > "$D/cli.sh" <<EOF
#!/bin/sh
cd "$D/proj" && exec env -i PATH="$BASE_PATH" HOME="$D/home" TMPDIR="$D/tmp" \
  WAYLAND_DISPLAY="\$WAYLAND_DISPLAY" XDG_RUNTIME_DIR="\$XDG_RUNTIME_DIR" \
  ANTHROPIC_BASE_URL="http://127.0.0.1:$PORT" ANTHROPIC_API_KEY=sk-ant-dummy \
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 \
  CLAUDE_CODE_MAX_RETRIES=0 IS_SANDBOX=1 \
  claude -p "Do the task" --output-format json --settings "$D/settings.json" \
    --permission-mode bypassPermissions < /dev/null > "$D/out.json"
EOF
  local t0; t0=$(now)
  under_harness
  stop_server
  verdict "$1" "$4" "$5" "$(elapsed "$t0")"
}

codex_case() {  # NAME USER_ACTION COMMAND EXPECT PROMPTS
  new_case "$1" "$2"
  mkdir -p "$D/codex-home"
  start_server "$3"
  cat > "$D/codex-home/config.toml" <<EOF
model = "scripted-model"
model_provider = "scripted"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.scripted]
name = "scripted"
base_url = "http://127.0.0.1:$PORT/v1"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 30000
EOF
  printf '{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"%s hook codex","timeout":60}]}]}}\n' \
    "$PCPCTL" > "$D/codex-home/hooks.json"
  cat > "$D/cli.sh" <<EOF
#!/bin/sh
cd "$D/proj" && exec env -i PATH="$BASE_PATH" HOME="$D/home" TMPDIR="$D/tmp" \
  WAYLAND_DISPLAY="\$WAYLAND_DISPLAY" XDG_RUNTIME_DIR="\$XDG_RUNTIME_DIR" \
  CODEX_HOME="$D/codex-home" SCRIPTED_API_KEY=dummy \
  codex exec --skip-git-repo-check --json --disable plugins --dangerously-bypass-hook-trust \
    --sandbox danger-full-access "Do the task" < /dev/null > "$D/out.jsonl"
EOF
  local t0; t0=$(now)
  under_harness
  stop_server
  verdict "$1" "$4" "$5" "$(elapsed "$t0")"
}

gemini_case() {  # NAME USER_ACTION COMMAND EXPECT PROMPTS
  new_case "$1" "$2"
  mkdir -p "$D/home/.gemini"
  printf '{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false},"hooks":{"BeforeTool":[{"matcher":"run_shell_command","hooks":[{"type":"command","command":"%s hook gemini","timeout":60000}]}]}}\n' \
    "$PCPCTL" > "$D/home/.gemini/settings.json"
  start_server "$3"
  cat > "$D/cli.sh" <<EOF
#!/bin/sh
cd "$D/proj" && exec env -i PATH="$BASE_PATH" HOME="$D/home" TMPDIR="$D/tmp" \
  WAYLAND_DISPLAY="\$WAYLAND_DISPLAY" XDG_RUNTIME_DIR="\$XDG_RUNTIME_DIR" \
  GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$PORT" GEMINI_API_KEY=dummy \
  gemini -p "Do the task" --output-format json --skip-trust --yolo < /dev/null > "$D/out.json"
EOF
  local t0; t0=$(now)
  under_harness
  stop_server
  verdict "$1" "$4" "$5" "$(elapsed "$t0")"
}

run_claude() {
  claude_case claude-deny    deny    "rm -rf ../victim" EXISTS yes
  claude_case claude-approve approve "rm -rf ../victim" GONE   yes
  claude_case claude-ls      deny    "ls"               EXISTS no
}

run_codex() {
  codex_case codex-deny      deny    "rm -r ../victim"  EXISTS yes
  codex_case codex-approve   approve "rm -r ../victim"  GONE   yes
  codex_case codex-ls        deny    "ls"               EXISTS no
}

run_gemini() {
  gemini_case gemini-deny    deny    "rm -rf ../victim" EXISTS yes
  gemini_case gemini-approve approve "rm -rf ../victim" GONE   yes
  gemini_case gemini-ls      deny    "ls"               EXISTS no
}

for w in "${WHICH[@]}"; do
  case "$w" in
    claude|codex|gemini)
      if [ ! -x "$AGENTS_BIN/$w" ]; then
        echo "FAIL $w: not found in $AGENTS_BIN"; FAIL=$((FAIL + 1)); continue
      fi
      "run_$w" ;;
    *) echo "usage: $0 [claude|codex|gemini]..." >&2; exit 2 ;;
  esac
done
echo "$PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
