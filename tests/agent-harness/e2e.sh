#!/bin/bash
# End to end: the real agent CLIs (Claude Code, Codex CLI, Gemini CLI), offline against the
# scripted model server on loopback, with the hook installed by `pcpctl hook install` (never
# hand-written settings) and the headless compositor (pcp-harness) playing the user. The test
# looks on disk and at the harness's JSON lines (one decision line per intent, with its params,
# threshold, plan and what the user did).
#
# Per CLI:
#   check   `pcpctl hook check` passes what install wrote, and refuses it once the CLI's timeout
#           is set below the hook's deadline
#   approve `rm -rf ../victim` (outside the working folder: High), the user approves -> gone
#   steps   one CLI session, one tool call a model turn, the user denying every prompt, with the
#           voice model loaded (a High prompt asks for voice and visual):
#             ls                                                   -> runs, no prompt
#             rm -rf ../victim                                     -> voice+visual, kept
#             a here-document writing inside the project          -> runs, no prompt
#             python3 -c, perl -e, node -e deleting outside it     -> voice+visual, folder kept
#             cat ~/.ssh/id_rsa                                    -> a prompt, key not shown
#             scp and curl -F of the key                           -> voice+visual, never run
#             crontab - and systemctl --user enable                -> voice+visual, never run
#           Claude Code also: its Read of ~/.ssh/id_rsa            -> a prompt
#           Codex also: apply_patch as Codex sends it (a Bash here-document), a file inside the
#           project -> written, no prompt; the case's ~/.bashrc -> a prompt, unchanged
#   (scp, curl, crontab and systemctl are shims in the case's PATH that record being run: no
#   network, no real crontab.)
# Codex uses `rm -r` (its own rule refuses any forced rm before a hook is asked) and can only
# object in PreToolUse: its "approve" is the hook saying nothing. Gemini can only deny or pass.
#
# Usage: e2e.sh [claude|codex|gemini]...       (default: all three)
# Env: PCP_HARNESS, PCPCTL (binaries), AGENTS_BIN (folder with claude, codex, gemini),
#      PCP_CACHE_DIR (the voice model), KEEP=1 keeps the scratch folder. Prints one line per
#      check and "N passed, M failed"; exits 1 if any failed or a CLI is missing.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
SERVER="$HERE/scripted_model_server.py"
STEPS="$HERE/steps.py"
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

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# result NAME OK(1|0) DETAIL [quiet]
result() {
  if [ "$2" = 1 ]; then PASS=$((PASS + 1)); r=PASS; else FAIL=$((FAIL + 1)); r=FAIL; fi
  printf '%-4s %-26s %s\n' "$r" "$1" "$3"
  if [ "$r" = FAIL ] && [ -z "${4:-}" ] && [ -f "${D:-/nonexistent}/harness.err" ]; then
    tail -n 5 "$D/harness.err" | sed 's/^/     | /'
  fi
}

# new_case NAME USER_ACTION -> D with D/proj (the working folder), D/victim*, D/home (with a
# key and a .bashrc), D/shims, the user script
new_case() {
  D="$WORK/$1"
  mkdir -p "$D/home/.ssh" "$D/proj" "$D/tmp" "$D/shims" "$D/codex-home"
  for v in victim victim-py victim-pl victim-node; do
    mkdir -p "$D/$v"; echo "precious" > "$D/$v/file.txt"
  done
  printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\nSECRET-KEY-MATERIAL-%s\n-----END OPENSSH PRIVATE KEY-----\n' \
    "$1" > "$D/home/.ssh/id_rsa"
  chmod 600 "$D/home/.ssh/id_rsa"
  printf '# the case'"'"'s bashrc\n' > "$D/home/.bashrc"
  for shim in scp curl crontab systemctl; do
    printf '#!/bin/sh\necho "%s $*" >> "%s/ran"\n' "$shim" "$D" > "$D/shims/$shim"
    chmod +x "$D/shims/$shim"
  done
  printf '[[answer]]\ncapability = "*"\ndo = "%s"\n' "$2" > "$D/user.toml"
}

# pcpctl as the case's user: its HOME and CODEX_HOME.
as_user() {
  env HOME="$D/home" CODEX_HOME="$D/codex-home" "$@"
}

start_server() {  # --command C | --steps FILE
  python3 "$SERVER" --port-file "$D/port" --log "$D/requests.jsonl" "$@" \
    --idle 60 --lifetime 300 --max-requests 200 > "$D/server.out" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 100); do [ -s "$D/port" ] && break; sleep 0.05; done
  PORT=$(cat "$D/port")
}

stop_server() {
  kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""
}

# Runs D/cli.sh inside pcp-harness (which sets WAYLAND_DISPLAY and XDG_RUNTIME_DIR for it), with
# the case's home as the gate's too (its ~ is the case's).
under_harness() {  # [--voice]
  chmod +x "$D/cli.sh"
  timeout 300 env HOME="$D/home" "$PCP_HARNESS" "$@" --user "$D/user.toml" -- "$D/cli.sh" \
    > "$D/harness.jsonl" 2> "$D/harness.err"
}

# verdict NAME EXPECT(EXISTS|GONE) PROMPTS(yes|no) SECONDS: one-command cases
verdict() {
  local name=$1 expect=$2 want_prompt=$3 secs=$4 state prompts ok=1
  if [ -d "$D/victim" ]; then state=EXISTS; else state=GONE; fi
  prompts=$(grep -c '"event":"prompt"' "$D/harness.jsonl" 2>/dev/null); prompts=${prompts:-0}
  [ "$state" = "$expect" ] || ok=0
  if [ "$want_prompt" = yes ] && [ "$prompts" -lt 1 ]; then ok=0; fi
  if [ "$want_prompt" = no ] && [ "$prompts" -gt 0 ]; then ok=0; fi
  # The hook must actually have asked: a decision line for shell.exec.
  grep -q '"capability":"shell.exec"' "$D/harness.jsonl" 2>/dev/null || ok=0
  result "$name" $ok "$(printf 'victim=%-6s (want %-6s) prompts=%s %5.1fs' "$state" "$expect" "$prompts" "$secs")"
}

# install CLI: `pcpctl hook install` into the case's settings, then `pcpctl hook check`.
install() {
  local cli=$1 trust=()
  [ "$cli" = codex ] && trust=(--trust-bypassed)
  as_user "$PCPCTL" hook install "$cli" > "$D/install.out" 2>&1 || {
    result "$(basename "$D")-install" 0 "$(tail -n 3 "$D/install.out")"; return 1; }
  as_user "$PCPCTL" hook check "$cli" "${trust[@]}" > "$D/check.out" 2>&1 || {
    result "$(basename "$D")-install" 0 "check refused: $(tail -n 3 "$D/check.out")"; return 1; }
}

# check_case CLI FILE SHORT: install, check passes; the timeout set to SHORT (the CLI's unit,
# below the deadline), check refuses naming the file and key.
check_case() {
  local cli=$1 file=$2 short=$3 trust=() rc
  new_case "$cli-check" deny
  [ "$cli" = codex ] && trust=(--trust-bypassed)
  if [ "$cli" = gemini ]; then gemini_settings; fi
  install "$cli" || return
  # As a user would edit it (the file may hold comments): every timeout of the file.
  sed -i -E "s/\"timeout\": [0-9]+/\"timeout\": $short/" "$D/$file"
  as_user "$PCPCTL" hook check "$cli" "${trust[@]}" > "$D/check-short.out" 2>&1
  rc=$?
  if [ $rc = 1 ] && grep -q "$D/$file: hooks\.[A-Za-z]*\[0\]\.hooks\[0\]\.timeout" "$D/check-short.out"; then
    result "$cli-check" 1 "install passes the check; timeout $short refused (exit $rc)"
  else
    result "$cli-check" 0 "exit $rc: $(head -c 300 "$D/check-short.out")"
  fi
}

claude_run() {  # ARGS for the server; runs one Claude Code session under the harness
  start_server "$@"
  cat > "$D/cli.sh" <<EOF
#!/bin/sh
cd "$D/proj" && exec env -i PATH="$D/shims:$BASE_PATH" HOME="$D/home" TMPDIR="$D/tmp" \
  WAYLAND_DISPLAY="\$WAYLAND_DISPLAY" XDG_RUNTIME_DIR="\$XDG_RUNTIME_DIR" \
  ANTHROPIC_BASE_URL="http://127.0.0.1:$PORT" ANTHROPIC_API_KEY=sk-ant-dummy \
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 \
  CLAUDE_CODE_MAX_RETRIES=0 IS_SANDBOX=1 \
  claude -p "Do the task" --output-format json --permission-mode bypassPermissions \
    < /dev/null > "$D/out.json"
EOF
}

claude_case() {  # NAME USER_ACTION COMMAND EXPECT PROMPTS
  new_case "$1" "$2"
  install claude-code || return
  claude_run --command "$3"
  local t0; t0=$(now)
  under_harness
  stop_server
  verdict "$1" "$4" "$5" "$(elapsed "$t0")"
}

codex_run() {
  start_server "$@"
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
  cat > "$D/cli.sh" <<EOF
#!/bin/sh
cd "$D/proj" && exec env -i PATH="$D/shims:$BASE_PATH" HOME="$D/home" TMPDIR="$D/tmp" \
  WAYLAND_DISPLAY="\$WAYLAND_DISPLAY" XDG_RUNTIME_DIR="\$XDG_RUNTIME_DIR" \
  CODEX_HOME="$D/codex-home" SCRIPTED_API_KEY=dummy \
  codex exec --skip-git-repo-check --json --disable plugins --dangerously-bypass-hook-trust \
    --sandbox danger-full-access "Do the task" < /dev/null > "$D/out.jsonl"
EOF
}

codex_case() {  # NAME USER_ACTION COMMAND EXPECT PROMPTS
  new_case "$1" "$2"
  install codex || return
  codex_run --command "$3"
  local t0; t0=$(now)
  under_harness
  stop_server
  verdict "$1" "$4" "$5" "$(elapsed "$t0")"
}

# Gemini CLI's own settings (auth, no usage statistics), which install must keep.
gemini_settings() {
  mkdir -p "$D/home/.gemini"
  cat > "$D/home/.gemini/settings.json" <<'EOF'
{
  // offline: an API key against the scripted server, no usage statistics
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "privacy": {"usageStatisticsEnabled": false}
}
EOF
}

gemini_run() {
  start_server "$@"
  cat > "$D/cli.sh" <<EOF
#!/bin/sh
cd "$D/proj" && exec env -i PATH="$D/shims:$BASE_PATH" HOME="$D/home" TMPDIR="$D/tmp" \
  WAYLAND_DISPLAY="\$WAYLAND_DISPLAY" XDG_RUNTIME_DIR="\$XDG_RUNTIME_DIR" \
  GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$PORT" GEMINI_API_KEY=dummy \
  gemini -p "Do the task" --output-format json --skip-trust --yolo < /dev/null > "$D/out.json"
EOF
}

gemini_case() {  # NAME USER_ACTION COMMAND EXPECT PROMPTS
  new_case "$1" "$2"
  gemini_settings
  install gemini || return
  gemini_run --command "$3"
  local t0; t0=$(now)
  under_harness
  stop_server
  verdict "$1" "$4" "$5" "$(elapsed "$t0")"
}

# steps_case CLI: the grouped session (see the top); steps.py writes the steps and checks them.
steps_case() {
  local cli=$1 name="$1-steps" t0
  new_case "$name" deny
  [ "$cli" = gemini ] && gemini_settings
  case $cli in
    claude) install claude-code || return ;;
    *) install "$cli" || return ;;
  esac
  python3 "$STEPS" write "$cli" "$D" > "$D/steps.json"
  "${cli}_run" --steps "$D/steps.json" --full-bodies
  t0=$(now)
  under_harness --voice
  stop_server
  local secs; secs=$(elapsed "$t0")
  python3 "$STEPS" check "$cli" "$D" > "$D/steps.out" 2>&1
  while IFS=' ' read -r verdict step detail; do
    case $verdict in
      PASS) result "$cli:$step" 1 "$detail" ;;
      FAIL) result "$cli:$step" 0 "$detail" quiet ;;
    esac
  done < "$D/steps.out"
  echo "     ($name: one session, ${secs}s)"
}

run_claude() {
  check_case claude-code home/.claude/settings.json 30
  claude_case claude-approve approve "rm -rf ../victim" GONE   yes
  steps_case claude
}

run_codex() {
  check_case codex codex-home/hooks.json 30
  codex_case codex-approve   approve "rm -r ../victim"  GONE   yes
  steps_case codex
}

run_gemini() {
  check_case gemini home/.gemini/settings.json 30000
  gemini_case gemini-approve approve "rm -rf ../victim" GONE   yes
  steps_case gemini
}

T0=$(now)
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
echo "$PASS passed, $FAIL failed in $(elapsed "$T0") s"
[ "$FAIL" = 0 ]
